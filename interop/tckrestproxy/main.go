// Command tckrestproxy serves an agent's HTTP+JSON binding at the root of
// a host, for the a2a-tck suite: its REST client joins each path to the
// root of the interface URL's host (urljoin with "/message:send"), whatever
// the URL's path, so it cannot reach a binding under /a/{handle}. Every
// other path is passed on as it is. Loopback only; for tests.
package main

import (
	"flag"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18092", "address to listen on (loopback)")
	target := flag.String("target", "http://127.0.0.1:8080", "Switchboard base URL")
	prefix := flag.String("prefix", "/a/tck", "the agent's address path, which the binding's root paths are served under")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil {
		log.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.FlushInterval = -1 // SSE streams pass at once
	log.Fatal(http.ListenAndServe(*listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if path := r.URL.Path; strings.HasPrefix(path, "/message:") || path == "/tasks" || strings.HasPrefix(path, "/tasks/") ||
			path == "/extendedAgentCard" {
			r.URL.Path, r.URL.RawPath = *prefix+path, ""
		}
		p.ServeHTTP(w, r)
	})))
}
