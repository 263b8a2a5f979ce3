// Command jsontool reads values out of JSON documents for interop/run.sh,
// which calls it a few hundred times a run: a Go binary starts in a few
// milliseconds, Node in tens. It does what js/tools.mjs's get, docs and
// events do, with the same paths and output.
//
//	jsontool get FILE|- PATH
//	    The value at PATH (".a.b[0].c", "[-1]", ".list.length") of the
//	    document: strings raw, anything else as compact JSON. A file of
//	    several concatenated documents (the a2a CLI's stream output) is read
//	    as an array of them. Exits 1 when PATH has no value.
//	jsontool docs FILE|- PATH
//	    Like get, but the input is always an array of documents.
//	jsontool events FILE|-
//	    One line per event of a stream printed by `a2a send --stream -o
//	    json`: "task STATE ID", "artifactUpdate "TEXT"",
//	    "statusUpdate STATE ID", "message "TEXT"".
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
)

func main() {
	if len(os.Args) < 3 {
		die("usage: jsontool get|docs FILE|- PATH, or jsontool events FILE|-")
	}
	cmd, file := os.Args[1], os.Args[2]
	docs, err := readDocuments(file)
	if err != nil {
		die(err.Error())
	}
	switch cmd {
	case "get", "docs":
		if len(os.Args) != 4 {
			die("usage: jsontool " + cmd + " FILE|- PATH")
		}
		root := docs[0]
		if cmd == "docs" || len(docs) > 1 {
			root, _ = json.Marshal(docs)
		}
		v, ok, err := lookup(root, os.Args[3])
		if err != nil {
			die(err.Error())
		}
		if !ok {
			die("no value at " + os.Args[3])
		}
		fmt.Println(text(v))
	case "events":
		for _, d := range docs {
			fmt.Println(event(d))
		}
	default:
		die("unknown command " + cmd)
	}
}

func die(msg string) {
	fmt.Fprintf(os.Stderr, "jsontool %s: %s\n", strings.Join(os.Args[1:2], ""), msg)
	os.Exit(1)
}

// readDocuments reads the concatenated JSON documents of file ("-" is
// standard input).
func readDocuments(file string) ([]json.RawMessage, error) {
	var r io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var docs []json.RawMessage
	dec := json.NewDecoder(r)
	for {
		var d json.RawMessage
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, errors.New("no JSON document in the input")
	}
	return docs, nil
}

var step = regexp.MustCompile(`^(?:\.([A-Za-z_$][\w$-]*)|\[(-?\d+)\])`)

// lookup follows path from v. A step past a value that has none is no
// value; ".length" of an array or a string is its length.
func lookup(v json.RawMessage, path string) (json.RawMessage, bool, error) {
	for rest := path; rest != ""; {
		m := step.FindStringSubmatch(rest)
		if m == nil {
			return nil, false, fmt.Errorf("bad path %q at %d", path, len(path)-len(rest))
		}
		rest = rest[len(m[0]):]
		v = bytes.TrimSpace(v)
		if m[1] != "" {
			var obj map[string]json.RawMessage
			if json.Unmarshal(v, &obj) == nil && obj != nil {
				var ok bool
				if v, ok = obj[m[1]]; !ok {
					return nil, false, nil
				}
				continue
			}
			if m[1] != "length" {
				return nil, false, nil
			}
			var arr []json.RawMessage
			var s string
			switch {
			case json.Unmarshal(v, &arr) == nil && arr != nil:
				v = json.RawMessage(strconv.Itoa(len(arr)))
			case len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil:
				v = json.RawMessage(strconv.Itoa(len(utf16.Encode([]rune(s)))))
			default:
				return nil, false, nil
			}
			continue
		}
		var arr []json.RawMessage
		if json.Unmarshal(v, &arr) != nil || arr == nil {
			return nil, false, nil
		}
		k, _ := strconv.Atoi(m[2])
		if k < 0 {
			k += len(arr)
		}
		if k < 0 || k >= len(arr) {
			return nil, false, nil
		}
		v = arr[k]
	}
	return v, true, nil
}

// text is v as printed: a string raw, anything else as compact JSON.
func text(v json.RawMessage) string {
	var s string
	if v = bytes.TrimSpace(v); len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

// quote is s as a JSON string, as JavaScript's JSON.stringify writes it.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

type parts []struct {
	Text *string `json:"text"`
}

func (p parts) text() string {
	var b strings.Builder
	for _, part := range p {
		if part.Text != nil {
			b.WriteString(*part.Text)
		}
	}
	return b.String()
}

type status struct {
	State *string `json:"state"`
}

func (s *status) state() string {
	if s == nil || s.State == nil {
		return "undefined"
	}
	return *s.State
}

// event is the line events prints for a stream response.
func event(d json.RawMessage) string {
	var ev struct {
		Task *struct {
			ID     string  `json:"id"`
			Status *status `json:"status"`
		} `json:"task"`
		StatusUpdate *struct {
			TaskID string  `json:"taskId"`
			Status *status `json:"status"`
		} `json:"statusUpdate"`
		ArtifactUpdate *struct {
			Artifact *struct {
				Parts parts `json:"parts"`
			} `json:"artifact"`
		} `json:"artifactUpdate"`
		Message *struct {
			Parts parts `json:"parts"`
		} `json:"message"`
	}
	_ = json.Unmarshal(d, &ev)
	switch {
	case ev.Task != nil:
		return fmt.Sprintf("task %s %s", ev.Task.Status.state(), ev.Task.ID)
	case ev.StatusUpdate != nil:
		return fmt.Sprintf("statusUpdate %s %s", ev.StatusUpdate.Status.state(), ev.StatusUpdate.TaskID)
	case ev.ArtifactUpdate != nil:
		var p parts
		if ev.ArtifactUpdate.Artifact != nil {
			p = ev.ArtifactUpdate.Artifact.Parts
		}
		return "artifactUpdate " + quote(p.text())
	case ev.Message != nil:
		return "message " + quote(ev.Message.Parts.text())
	}
	return "unknown " + text(d)
}
