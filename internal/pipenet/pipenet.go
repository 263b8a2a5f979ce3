package pipenet

import (
	"context"
	"net"
	"sync"
)

// Network is a listener of in-process connections, and the dialer that
// reaches it. Create it inside the bubble that uses it.
type Network struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// New returns a Network that accepts until Close.
func New() *Network {
	return &Network{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for a dial and returns the server's end of its pipe.
func (n *Network) Accept() (net.Conn, error) {
	select {
	case c := <-n.conns:
		return c, nil
	case <-n.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and every dial; connections already made stay open.
func (n *Network) Close() error {
	n.once.Do(func() { close(n.done) })
	return nil
}

// Addr is the listener's address, "pipe".
func (n *Network) Addr() net.Addr { return Addr{} }

// DialContext connects to the listener, whatever the address, once Accept
// takes the connection, and returns the client's end of the pipe.
func (n *Network) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case n.conns <- server:
		return client, nil
	case <-n.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Addr is the address of every end of a Network's connections.
type Addr struct{}

// Network is "pipe".
func (Addr) Network() string { return "pipe" }

// String is "pipe".
func (Addr) String() string { return "pipe" }
