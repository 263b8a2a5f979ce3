package mcpauth

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// Bounds of the cache of Client ID Metadata Documents.
const (
	// MinDocumentCache and MaxDocumentCache clamp a document's
	// Cache-Control max-age.
	MinDocumentCache = time.Minute
	MaxDocumentCache = 24 * time.Hour
	// DefaultDocumentCache is how long a document without max-age is
	// used.
	DefaultDocumentCache = time.Hour
	// maxCachedDocuments bounds the cache: past it, expired entries go,
	// and then any one.
	maxCachedDocuments = 1000
)

// cacheTTL says how long a document may be used, from its Cache-Control
// header values: max-age clamped to MinDocumentCache–MaxDocumentCache,
// DefaultDocumentCache without one; false for no-store (and no-cache,
// which asks for a fetch each time).
func cacheTTL(values []string) (time.Duration, bool) {
	ttl := DefaultDocumentCache
	for _, v := range values {
		for dir := range strings.SplitSeq(v, ",") {
			name, arg, _ := strings.Cut(strings.TrimSpace(dir), "=")
			switch strings.ToLower(name) {
			case "no-store", "no-cache":
				return 0, false
			case "max-age":
				if n, err := strconv.ParseInt(strings.Trim(arg, `"`), 10, 64); err == nil && n >= 0 {
					ttl = time.Duration(min(n, int64(MaxDocumentCache/time.Second))) * time.Second
				}
			}
		}
	}
	return min(max(ttl, MinDocumentCache), MaxDocumentCache), true
}

// documentCache holds the clients of documents fetched, until their
// Cache-Control lets them be used.
type documentCache struct {
	mu      sync.Mutex
	entries map[string]cachedClient // guarded by mu
}

// cachedClient is a client and when it must be fetched again.
type cachedClient struct {
	client  *switchboard.OAuthClient
	expires time.Time
}

func newDocumentCache() *documentCache {
	return &documentCache{entries: make(map[string]cachedClient)}
}

// get returns the cached client of id, or nil if none is fresh at now.
func (c *documentCache) get(id string, now time.Time) *switchboard.OAuthClient {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok {
		return nil
	}
	if !now.Before(e.expires) {
		delete(c.entries, id)
		return nil
	}
	cl := *e.client
	return &cl
}

// put caches the client of id, fetched at now, until expires.
func (c *documentCache) put(id string, cl *switchboard.OAuthClient, now, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[id]; !ok && len(c.entries) >= maxCachedDocuments {
		c.evictLocked(now)
	}
	c.entries[id] = cachedClient{client: cl, expires: expires}
}

// evictLocked makes room for one entry: it deletes the entries expired at
// now, and any one if none had.
func (c *documentCache) evictLocked(now time.Time) {
	before := len(c.entries)
	for id, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, id)
		}
	}
	if len(c.entries) < before {
		return
	}
	for id := range c.entries {
		delete(c.entries, id)
		return
	}
}
