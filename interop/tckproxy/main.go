package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18091", "address to listen on (loopback)")
	target := flag.String("target", "http://127.0.0.1:8080", "Switchboard base URL")
	token := flag.String("token", os.Getenv("SWITCHBOARD_PEER_TOKEN"), "peer token to add")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tckproxy:", err)
		os.Exit(2)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1 // SSE events go through at once
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer "+*token)
		}
		r.Host = u.Host
		proxy.ServeHTTP(w, r)
	})
	log.Fatal(http.ListenAndServe(*listen, handler))
}
