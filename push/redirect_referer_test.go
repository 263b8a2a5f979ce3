package push_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/push"
)

// TestRedirectSendsNoReferer: a push redirected (307) to another host
// loses its token headers, and its URL too: Go's client would name it,
// query included (where a key may be), in Referer.
func TestRedirectSendsNoReferer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skip("no 127.0.0.2:", err)
	}
	referers := make(chan string, 1)
	target := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		referers <- r.Header.Get("Referer")
	}))
	target.Listener.Close()
	target.Listener = ln
	target.Start()
	defer target.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/moved", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	s := push.New(netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, "sb")
	if _, err := s.Push(context.Background(), config(redirector.URL+"/hook?key=SECRETSECRETSECRET", switchboard.ProtocolV1), workingTask()); err != nil {
		t.Fatal(err)
	}
	if referer := <-referers; strings.Contains(referer, "SECRETSECRETSECRET") {
		t.Errorf("the other host got the push URL's query in Referer: %q", referer)
	}
}
