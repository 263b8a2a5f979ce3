package reach

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// maxPage bounds what is read of a fetched page.
const maxPage = 256 << 10

// fetch GETs t.Fetch over conn (the connection the certificate was read
// from, so that the page comes from the server that was judged) and fills
// f. It closes conn. Without a connection, or with a certificate peers
// refuse, there is nothing a peer could fetch: not checked.
func (c *Checker) fetch(ctx context.Context, t Target, conn *tls.Conn, certState string, f *ownerapi.ReachFetch) {
	if conn == nil || certState == ownerapi.ReachFailing {
		if conn != nil {
			conn.Close()
		}
		f.State = ownerapi.ReachNotChecked
		return
	}
	var once sync.Once
	tr := &http.Transport{
		Proxy:             nil,
		DisableKeepAlives: true,
		DialTLSContext: func(context.Context, string, string) (net.Conn, error) {
			var out net.Conn
			once.Do(func() { out = conn })
			if out == nil {
				return nil, errors.New("reach: one connection per check")
			}
			return out, nil
		},
	}
	defer tr.CloseIdleConnections()
	defer conn.Close()
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.Fetch, nil)
	if err != nil {
		f.State, f.Problem = ownerapi.ReachFailing, fmt.Sprintf("cannot fetch %s: %v", t.Fetch, err)
		return
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "switchboard-reach")
	resp, err := hc.Do(req)
	if err != nil {
		f.State, f.Problem = ownerapi.ReachFailing, fmt.Sprintf("GET %s failed: %s", t.Fetch, dialCause(unwrapURL(err)))
		return
	}
	defer resp.Body.Close()
	f.Status = resp.StatusCode
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPage))
	f.State = ownerapi.ReachFailing
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		f.Problem = fmt.Sprintf("GET %s answered HTTP %d, sending it to %s: a proxy or another server answers the name", t.Fetch, resp.StatusCode, resp.Header.Get("Location"))
	case resp.StatusCode != http.StatusOK:
		f.Problem = fmt.Sprintf("GET %s answered HTTP %d: the name reaches a server that does not serve %s", t.Fetch, resp.StatusCode, what(t))
	case err != nil:
		f.Problem = fmt.Sprintf("reading %s failed: %s", t.Fetch, dialCause(err))
	case t.Card:
		f.State, f.Problem = checkCard(t, body)
	default:
		f.State, f.Problem = checkHealth(t, body)
	}
}

// what names what t.Fetch should be.
func what(t Target) string {
	if t.Card {
		return "this agent's card"
	}
	return "this deployment (GET /healthz)"
}

// checkCard checks that body is an agent card (A2A 1.0 or 0.3) that
// names t.Expect among its URLs.
func checkCard(t Target, body []byte) (state, problem string) {
	var card struct {
		Name       string `json:"name"`
		URL        string `json:"url"` // A2A 0.3
		Interfaces []struct {
			URL string `json:"url"`
		} `json:"supportedInterfaces"` // A2A 1.0
	}
	if err := json.Unmarshal(body, &card); err != nil || card.Name == "" {
		return ownerapi.ReachFailing, fmt.Sprintf("%s is not an agent card: the name reaches a server that does not serve this agent's card", t.Fetch)
	}
	urls := []string{card.URL}
	for _, i := range card.Interfaces {
		urls = append(urls, i.URL)
	}
	if t.Expect == "" {
		return ownerapi.ReachOK, ""
	}
	for _, u := range urls {
		if u != "" && strings.TrimRight(u, "/") == strings.TrimRight(t.Expect, "/") {
			return ownerapi.ReachOK, ""
		}
	}
	named := "no address"
	for _, u := range urls {
		if u != "" {
			named = u
			break
		}
	}
	return ownerapi.ReachFailing, fmt.Sprintf("the card at %s names %s, not this agent's address %s: the name reaches another server or another agent",
		t.Fetch, named, t.Expect)
}

// checkHealth checks that body is a Switchboard server's /healthz.
func checkHealth(t Target, body []byte) (state, problem string) {
	var h struct {
		OK bool `json:"ok"`
	}
	if json.Unmarshal(body, &h) != nil || !h.OK {
		return ownerapi.ReachFailing, fmt.Sprintf("%s did not answer as a Switchboard server does: the name reaches another server", t.Fetch)
	}
	return ownerapi.ReachOK, ""
}

// unwrapURL returns the error a *url.Error wraps.
func unwrapURL(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}
