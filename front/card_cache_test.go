package front_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

const testCardJSON = `{"name": "bot", "description": "calls http://10.0.0.1/x", "supportedInterfaces": [{"url": "https://up.example.org/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}`

// cardServer is an upstream whose card handler can be swapped, and which
// logs the paths it is asked for.
type cardServer struct {
	*httptest.Server
	mu      sync.Mutex
	paths   []string     // guarded by mu
	handler http.Handler // guarded by mu
}

func newCardServer(t *testing.T, h http.HandlerFunc) *cardServer {
	t.Helper()
	s := &cardServer{handler: h}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		h := s.handler
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *cardServer) setHandler(h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

func (s *cardServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

func serveCardJSON(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}
}

func serveStatus(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }
}

// testClock is a clock that moves only when told to.
type testClock struct {
	mu  sync.Mutex
	now time.Time // guarded by mu
}

func newTestClock() *testClock { return &testClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newTestCardCache(clock *testClock) *front.CardCache {
	return &front.CardCache{Now: clock.Now}
}

func TestCardCacheCaches(t *testing.T) {
	srv := newCardServer(t, serveCardJSON(testCardJSON))
	clock := newTestClock()
	c := newTestCardCache(clock)
	ctx := t.Context()
	card, st := c.Get(ctx, srv.Client(), srv.URL+"/a2a", srv.URL+"/card.json", testPublic)
	if card == nil || st.State != front.CardOK || st.Err != "" || !st.FetchedAt.Equal(clock.Now()) {
		t.Fatalf("Get = %v, %+v, want a card, ok, fetched now", card, st)
	}
	if got, want := card.Description, "calls "+rmURL; got != want {
		t.Errorf("Description = %q, want %q", got, want)
	}
	clock.Advance(front.DefaultCardTTL - time.Second)
	if again, _ := c.Get(ctx, srv.Client(), srv.URL+"/a2a", srv.URL+"/card.json", testPublic); again != card {
		t.Error("second Get within the TTL returned another card")
	}
	if got, want := len(srv.requests()), 1; got != want {
		t.Fatalf("requests = %d, want %d", got, want)
	}
	clock.Advance(2 * time.Second)
	if _, st := c.Get(ctx, srv.Client(), srv.URL+"/a2a", srv.URL+"/card.json", testPublic); st.State != front.CardOK || !st.FetchedAt.Equal(clock.Now()) {
		t.Errorf("Get after the TTL = %+v, want ok, fetched now", st)
	}
	if got, want := len(srv.requests()), 2; got != want {
		t.Errorf("requests = %d, want %d", got, want)
	}
}

func TestCardCacheStale(t *testing.T) {
	srv := newCardServer(t, serveCardJSON(testCardJSON))
	clock := newTestClock()
	c := newTestCardCache(clock)
	card, _ := c.Get(t.Context(), srv.Client(), srv.URL, "", testPublic)
	fetched := clock.Now()
	srv.setHandler(serveStatus(http.StatusInternalServerError))
	clock.Advance(front.DefaultCardTTL + time.Second)
	got, st := c.Get(t.Context(), srv.Client(), srv.URL, "", testPublic)
	if got != card || st.State != front.CardStale || st.Err != "HTTP 500" || !st.FetchedAt.Equal(fetched) {
		t.Errorf("Get = %p, %+v, want the old card %p, stale, HTTP 500, fetched %v", got, st, card, fetched)
	}
	srv.setHandler(serveCardJSON(testCardJSON))
	clock.Advance(front.DefaultCardRetryAfter)
	if _, st := c.Get(t.Context(), srv.Client(), srv.URL, "", testPublic); st.State != front.CardOK || st.Err != "" {
		t.Errorf("Get once the upstream is back = %+v, want ok", st)
	}
}

func TestCardCacheRetryAfter(t *testing.T) {
	srv := newCardServer(t, serveStatus(http.StatusBadGateway))
	clock := newTestClock()
	c := newTestCardCache(clock)
	get := func() (*front.Card, front.CardStatus) {
		return c.Get(t.Context(), srv.Client(), srv.URL, srv.URL+"/card.json", testPublic)
	}
	if card, st := get(); card != nil || st.State != front.CardMissing || st.Err != "HTTP 502" {
		t.Fatalf("Get = %v, %+v, want no card, missing, HTTP 502", card, st)
	}
	clock.Advance(front.DefaultCardRetryAfter - time.Second)
	if _, st := get(); st.State != front.CardMissing {
		t.Errorf("Get = %+v, want missing", st)
	}
	if got, want := len(srv.requests()), 1; got != want {
		t.Fatalf("requests within %v = %d, want %d", front.DefaultCardRetryAfter, got, want)
	}
	clock.Advance(time.Second)
	get()
	if got, want := len(srv.requests()), 2; got != want {
		t.Errorf("requests after %v = %d, want %d", front.DefaultCardRetryAfter, got, want)
	}
}

func TestCardCacheRedirectRefused(t *testing.T) {
	srv := newCardServer(t, nil)
	srv.setHandler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere.json" {
			serveCardJSON(testCardJSON)(w, r)
			return
		}
		http.Redirect(w, r, "/elsewhere.json", http.StatusFound)
	})
	card, st := newTestCardCache(newTestClock()).Get(t.Context(), srv.Client(), srv.URL, srv.URL+"/card.json", testPublic)
	if card != nil || st.State != front.CardMissing || !strings.Contains(st.Err, "redirect") {
		t.Errorf("Get = %v, %+v, want no card, missing, a redirect", card, st)
	}
	if got, want := srv.requests(), []string{"/card.json"}; !slices.Equal(got, want) {
		t.Errorf("requests = %q, want %q", got, want)
	}
}

func TestCardCacheTooLarge(t *testing.T) {
	big := `{"name": "bot", "description": "` + strings.Repeat("x", front.MaxCardBytes) + `"}`
	for name, h := range map[string]http.HandlerFunc{
		"ContentLength": serveCardJSON(big),
		"Chunked": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			for i := 0; i < len(big); i += 1 << 10 {
				_, _ = w.Write([]byte(big[i:min(i+1<<10, len(big))]))
				w.(http.Flusher).Flush()
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newCardServer(t, h)
			card, st := newTestCardCache(newTestClock()).Get(t.Context(), srv.Client(), srv.URL, srv.URL+"/card.json", testPublic)
			if card != nil || st.State != front.CardMissing || !strings.Contains(st.Err, "larger") {
				t.Errorf("Get = %v, %+v, want no card, missing, too large", card, st)
			}
		})
	}
}

func TestCardCacheCrossOriginRefused(t *testing.T) {
	upstream := newCardServer(t, serveCardJSON(testCardJSON))
	other := newCardServer(t, serveCardJSON(testCardJSON))
	c := newTestCardCache(newTestClock())
	for name, cardURL := range map[string]string{
		"OtherServer": other.URL + "/.well-known/agent-card.json",
		"OtherScheme": strings.Replace(upstream.URL, "https:", "http:", 1) + "/card.json",
		"Credentials": strings.Replace(upstream.URL, "https://", "https://u:p@", 1) + "/card.json",
	} {
		t.Run(name, func(t *testing.T) {
			card, st := c.Get(t.Context(), upstream.Client(), upstream.URL, cardURL, testPublic)
			if card != nil || st.State != front.CardRefused || !strings.Contains(st.Err, "origin") {
				t.Errorf("Get = %v, %+v, want no card, refused for its origin", card, st)
			}
		})
	}
	if n, m := len(upstream.requests()), len(other.requests()); n+m != 0 {
		t.Errorf("requests = %d and %d, want none", n, m)
	}
	for _, bad := range []string{"http://up.example.org", "https://u:p@up.example.org", "::"} {
		if _, st := c.Get(t.Context(), upstream.Client(), bad, "", testPublic); st.State != front.CardRefused {
			t.Errorf("Get(upstream %q) = %+v, want refused", bad, st)
		}
	}
}

func TestCardCacheWellKnownFallback(t *testing.T) {
	srv := newCardServer(t, nil)
	srv.setHandler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/agent.json" {
			serveCardJSON(testCardJSON)(w, r)
			return
		}
		http.NotFound(w, r)
	})
	card, st := newTestCardCache(newTestClock()).Get(t.Context(), srv.Client(), srv.URL+"/a2a/", "", testPublic)
	if card == nil || st.State != front.CardOK {
		t.Fatalf("Get = %v, %+v, want a card", card, st)
	}
	want := []string{"/a2a/.well-known/agent-card.json", "/a2a/.well-known/agent.json", "/.well-known/agent-card.json", "/.well-known/agent.json"}
	if got := srv.requests(); !slices.Equal(got, want) {
		t.Errorf("requests = %q, want %q", got, want)
	}
}

func TestCardCacheWellKnownAllMissing(t *testing.T) {
	srv := newCardServer(t, nil)
	srv.setHandler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/agent-card.json" {
			serveCardJSON(`["not a card"]`)(w, r)
			return
		}
		http.NotFound(w, r)
	})
	_, st := newTestCardCache(newTestClock()).Get(t.Context(), srv.Client(), srv.URL+"/a2a", "", testPublic)
	if st.State != front.CardMissing || st.Err != "the answer is not an agent card" {
		t.Errorf("Get = %+v, want missing, not an agent card (rather than a 404)", st)
	}
	if got := len(srv.requests()); got != 4 {
		t.Errorf("requests = %d, want 4", got)
	}
}

func TestCardCacheNetworkFailure(t *testing.T) {
	srv := newCardServer(t, serveCardJSON(testCardJSON))
	client := srv.Client()
	srv.Close()
	_, st := newTestCardCache(newTestClock()).Get(t.Context(), client, srv.URL, "", testPublic)
	if st.State != front.CardMissing || st.Err != "the connection was refused" {
		t.Errorf("Get = %+v, want missing, connection refused", st)
	}
}

func TestCardCacheUntrustedCertificate(t *testing.T) {
	srv := newCardServer(t, serveCardJSON(testCardJSON))
	_, st := newTestCardCache(newTestClock()).Get(t.Context(), &http.Client{}, srv.URL, "", testPublic)
	if st.State != front.CardMissing || st.Err != "its TLS certificate is not trusted" {
		t.Errorf("Get = %+v, want missing, certificate not trusted", st)
	}
}

func TestCardCacheForget(t *testing.T) {
	srv := newCardServer(t, serveCardJSON(testCardJSON))
	c := newTestCardCache(newTestClock())
	c.Get(t.Context(), srv.Client(), srv.URL, "", testPublic)
	c.Forget(srv.URL)
	c.Get(t.Context(), srv.Client(), srv.URL, "", testPublic)
	if got, want := len(srv.requests()), 2; got != want {
		t.Errorf("requests = %d, want %d", got, want)
	}
}

func TestCardCacheSharesFetch(t *testing.T) {
	release := make(chan struct{})
	var fetches atomic.Int32
	srv := newCardServer(t, func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		<-release
		serveCardJSON(testCardJSON)(w, r)
	})
	c := newTestCardCache(newTestClock())
	const n = 10
	cards := make([]*front.Card, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { cards[i], _ = c.Get(t.Context(), srv.Client(), srv.URL, srv.URL+"/card.json", testPublic) })
	}
	testwait.For(t, "every Get to wait for the one fetch", func() bool { return front.CardWaiters(c) == n })
	close(release)
	wg.Wait()
	if got := fetches.Load(); got != 1 {
		t.Errorf("fetches = %d, want 1", got)
	}
	for i, card := range cards {
		if card == nil || card != cards[0] {
			t.Errorf("card %d = %p, want %p", i, card, cards[0])
		}
	}
}

func TestCardCacheCallerGivesUp(t *testing.T) {
	release := make(chan struct{})
	srv := newCardServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		serveCardJSON(testCardJSON)(w, r)
	})
	defer close(release)
	c := newTestCardCache(newTestClock())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	card, st := c.Get(ctx, srv.Client(), srv.URL, srv.URL+"/card.json", testPublic)
	if card != nil || st.State != front.CardMissing || st.Err == "" {
		t.Errorf("Get = %v, %+v, want no card, missing, with a reason", card, st)
	}
}

// TestCardCacheManyPublicAddresses: public addresses a caller names (the
// Host of a request) share one entry and one fetch, and each gets the
// card scrubbed for itself: a private URL stays only where it is on the
// public address's own origin (a server on a private network).
func TestCardCacheManyPublicAddresses(t *testing.T) {
	srv := newCardServer(t, serveCardJSON(`{"name": "bot", "description": "see http://127.0.0.3:8080/a/bot/x"}`))
	c := newTestCardCache(newTestClock())
	for round := range 2 {
		for i := range 50 {
			public := fmt.Sprintf("http://127.0.0.%d:8080/a/bot", i)
			card, st := c.Get(t.Context(), srv.Client(), srv.URL+"/a2a", "", public)
			if card == nil || st.State != front.CardOK {
				t.Fatalf("round %d, %s: %v, %+v", round, public, card, st)
			}
			want := "see " + rmURL
			if i == 3 {
				want = "see http://127.0.0.3:8080/a/bot/x"
			}
			if card.Description != want {
				t.Fatalf("round %d, %s: description %q, want %q", round, public, card.Description, want)
			}
		}
	}
	if got := len(srv.requests()); got != 1 {
		t.Fatalf("%d requests upstream for 100 cards of 50 public addresses, want 1", got)
	}
}
