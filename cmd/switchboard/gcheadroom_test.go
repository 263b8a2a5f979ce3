package main

import (
	"context"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/switchboard-dev/switchboard/gcfloor"
)

// TestGCHeadroomFlag: the default is gcfloor's, and a negative headroom is
// refused before the server starts.
func TestGCHeadroomFlag(t *testing.T) {
	var c CLI
	parser, err := kong.New(&c, kong.Vars{"default_data": t.TempDir()}, serveVars())
	must(t, err)
	if _, err := parser.Parse([]string{"serve"}); err != nil {
		t.Fatal(err)
	}
	if got := c.Serve.GCHeadroom << 20; got != gcfloor.DefaultHeadroom {
		t.Fatalf("default headroom: %d bytes, want %d", got, gcfloor.DefaultHeadroom)
	}
	bad := ServeCmd{GCHeadroom: -1}
	if err := bad.Run(context.Background(), &c, nil); err == nil || !strings.Contains(err.Error(), "--gc-headroom-mib") {
		t.Fatalf("a negative headroom: %v", err)
	}
}
