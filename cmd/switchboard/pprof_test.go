package main

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
)

func TestServePprof(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	addr, stop, err := servePprof("127.0.0.1:0", logger)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine?debug=1"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %s", path, resp.Status)
		}
	}
	if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("the profiling listener serves more than profiles: /metrics %s", resp.Status)
		}
	}
	if _, _, err := servePprof("256.0.0.1:bad", logger); err == nil {
		t.Error("a bad address was accepted")
	}
}
