package hub

import (
	"bytes"
	"sync"
)

// The reader of each connection reads a message into a buffer taken from
// readBufs and gives it back once the message is handled: a live
// session's frame is copied by the sessions into what they pass on, and
// any other message is copied out before it is handled. So a connection
// allocates nothing per session frame it reads, and an idle one holds no
// buffer.

// maxPooledReadBuf bounds the buffers kept: one grown by a rare large
// message is left to the garbage collector.
const maxPooledReadBuf = 128 << 10

var readBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// getReadBuf returns an empty buffer.
func getReadBuf() *bytes.Buffer {
	b := readBufs.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

// putReadBuf gives b back; no one may use its bytes after.
func putReadBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooledReadBuf {
		readBufs.Put(b)
	}
}
