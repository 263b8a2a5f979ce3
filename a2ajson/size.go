package a2ajson

import (
	"encoding/base64"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The sizes below are about what a value's JSON takes: its texts and raw
// bytes (with a sixteenth more for escapes), and a little for each object's
// keys and ids. A value of no fixed shape (metadata, data) counts 64 bytes;
// a write that outgrows the estimate grows its buffer as usual.

func eventSize(e a2a.Event) int {
	switch e := e.(type) {
	case *a2a.Task:
		return taskSize(e)
	case *a2a.Message:
		return messageSize(e)
	case *a2a.TaskStatusUpdateEvent:
		if e != nil {
			return 96 + len(e.TaskID) + len(e.ContextID) + statusSize(&e.Status) + mapSize(e.Metadata)
		}
	case *a2a.TaskArtifactUpdateEvent:
		if e != nil {
			return 96 + len(e.TaskID) + len(e.ContextID) + artifactSize(e.Artifact) + mapSize(e.Metadata)
		}
	}
	return 16
}

func taskSize(t *a2a.Task) int {
	if t == nil {
		return 4
	}
	n := 64 + len(t.ID) + len(t.ContextID) + statusSize(&t.Status) + mapSize(t.Metadata)
	for _, a := range t.Artifacts {
		n += artifactSize(a)
	}
	for _, m := range t.History {
		n += messageSize(m)
	}
	return n
}

func statusSize(s *a2a.TaskStatus) int {
	n := 80
	if s.Message != nil {
		n += messageSize(s.Message)
	}
	return n
}

func messageSize(m *a2a.Message) int {
	if m == nil {
		return 4
	}
	n := 96 + len(m.ID) + len(m.ContextID) + len(m.TaskID) + mapSize(m.Metadata)
	for _, e := range m.Extensions {
		n += len(e) + 3
	}
	for _, r := range m.ReferenceTasks {
		n += len(r) + 3
	}
	return n + partsSize(m.Parts)
}

func artifactSize(a *a2a.Artifact) int {
	if a == nil {
		return 4
	}
	return 64 + len(a.ID) + len(a.Name) + len(a.Description) + mapSize(a.Metadata) + partsSize(a.Parts)
}

func partsSize(ps a2a.ContentParts) int {
	n := 2
	for _, p := range ps {
		n++
		if p == nil {
			n += 4
			continue
		}
		n += 16 + len(p.Filename) + len(p.MediaType) + mapSize(p.Metadata)
		switch c := p.Content.(type) {
		case a2a.Text:
			n += len(c) + len(c)/16
		case a2a.Raw:
			n += base64.StdEncoding.EncodedLen(len(c))
		case a2a.URL:
			n += len(c) + len(c)/16
		default:
			n += 64
		}
	}
	return n
}

func mapSize(m map[string]any) int {
	if len(m) == 0 {
		return 0
	}
	return 64
}
