package front

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// TestClientDropsTheCallersAuthorization: a front without a bearer of its
// own never passes on an Authorization header its caller set (a peer's
// token is not the upstream's), and the peer's label goes upstream cut to
// maxPeerHeader bytes.
func TestClientDropsTheCallersAuthorization(t *testing.T) {
	var got []http.Header
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
	}))
	defer srv.Close()
	c, err := NewClient(loopbackTransport(srv, 0), srv.URL+"/a2a", switchboard.FrontCredentials{Headers: map[string]string{"X-Access": "pair"}})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(WithPeer(context.Background(), strings.Repeat("b", 3*maxPeerHeader)), "POST", srv.URL+"/a2a", nil)
	req.Header.Set("Authorization", "Bearer sbp_the-peers-own")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(got) != 1 {
		t.Fatalf("%d requests upstream", len(got))
	}
	if a := got[0].Get("Authorization"); a != "" {
		t.Errorf("the caller's Authorization went upstream: %q", a)
	}
	if p := got[0].Get("X-A2A-Peer"); len(p) != maxPeerHeader {
		t.Errorf("X-A2A-Peer is %d bytes, want %d", len(p), maxPeerHeader)
	}
}

// TestCardURLsStayOnTheUpstreamOrigin: the card is fetched, with the
// upstream's credentials, from https URLs on the upstream's origin only.
func TestCardURLsStayOnTheUpstreamOrigin(t *testing.T) {
	const up = "https://agent.example.com/a2a"
	for cardURL, ok := range map[string]bool{
		"https://agent.example.com/card.json":     true,
		"https://agent.example.com:443/card.json": true,
		"wss://agent.example.com/card.json":       false, // the same origin as https, not an https URL
		"http://agent.example.com/card.json":      false,
		"https://u:p@agent.example.com/card.json": false,
		"https://other.example.com/card.json":     false,
	} {
		urls, problem := cardURLs(up, cardURL)
		if (problem == "") != ok || ok && (len(urls) != 1 || urls[0] != cardURL) {
			t.Errorf("cardURLs(%q) = %q, %q; want ok %v", cardURL, urls, problem, ok)
		}
	}
	for _, upstream := range []string{"http://agent.example.com/a2a", "https://u:p@agent.example.com/a2a", "https:///a2a"} {
		if _, problem := cardURLs(upstream, ""); problem == "" {
			t.Errorf("cardURLs(%q) has no problem", upstream)
		}
	}
}

// oneFront is a FrontStore holding one front, as another instance may
// change it: FindFront is all the service reads here.
type oneFront struct {
	switchboard.FrontStore
	mu sync.Mutex
	f  switchboard.Front
}

func (o *oneFront) FindFront(ctx context.Context, agentID string) (*switchboard.Front, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f := o.f
	return &f, nil
}

// TestFrontChangedElsewhereIsReadAgain: a front changed on another
// instance (a new upstream, new credentials) is read again within
// frontRecheck, and its requests then go through a client made for it:
// the old upstream's client and credentials are not used again.
func TestFrontChangedElsewhereIsReadAgain(t *testing.T) {
	now := time.Now()
	store := &oneFront{f: switchboard.Front{AgentID: "a", Upstream: "https://old.example.com/a2a",
		Credentials: switchboard.FrontCredentials{Bearer: "old-secret-token"}, UpdatedAt: now}}
	s := NewService(store, nil, ClientOptions{}, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer s.Forget("a")
	s.Now = func() time.Time { return now }
	f1, e1, err := s.front(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	store.mu.Lock()
	store.f = switchboard.Front{AgentID: "a", Upstream: "https://new.example.com/a2a",
		Credentials: switchboard.FrontCredentials{Bearer: "new-secret-token"}, UpdatedAt: now.Add(time.Millisecond)}
	store.mu.Unlock()

	s.Now = func() time.Time { return now.Add(frontRecheck) }
	f2, e2, err := s.front(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if f2.Upstream != "https://new.example.com/a2a" || f1.Upstream == f2.Upstream {
		t.Fatalf("after %s the front is %s, want the new upstream", frontRecheck, f2.Upstream)
	}
	if e2 == e1 || e2.client == e1.client || e2.front.Credentials.Bearer != "new-secret-token" {
		t.Fatal("the changed front is served through the old upstream's client")
	}
}
