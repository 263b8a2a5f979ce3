package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-dev/switchboard/pairing"
)

// deviceEndpoints are where a device flow asks for a code and polls.
type deviceEndpoints struct {
	Auth, Token string
}

// maxMetadataDepth bounds the path prefixes discoverDevice tries.
const maxMetadataDepth = 6

// discoverDevice finds the device flow's endpoints of an address from its
// authorization server's metadata (RFC 8414): at the address itself
// ({addr}/.well-known/oauth-authorization-server, Switchboard's), then in
// the path-inserted form of RFC 8414 section 3.1, then at each shorter
// path down to the origin's (a2a-exposed's, whose A2A endpoint sits below
// its issuer). Both endpoints must be on the address's origin, since a
// re-pairing presents the stored token to the first. Without any metadata
// it falls back to {addr}/oauth/device_authorization and {addr}/oauth/token.
func discoverDevice(ctx context.Context, hc *http.Client, addr string) (deviceEndpoints, error) {
	u, err := url.Parse(addr)
	if err != nil {
		return deviceEndpoints{}, err
	}
	origin := u.Scheme + "://" + u.Host
	prefix := strings.TrimRight(u.EscapedPath(), "/")
	for depth := 0; depth < maxMetadataDepth; depth++ {
		urls := []string{origin + prefix + "/.well-known/oauth-authorization-server"}
		if prefix != "" {
			urls = append(urls, origin+"/.well-known/oauth-authorization-server"+prefix)
		}
		for _, m := range urls {
			ep, ok, err := readDeviceMetadata(ctx, hc, m)
			if err != nil {
				return deviceEndpoints{}, err
			}
			if !ok {
				continue
			}
			for _, e := range []string{ep.Auth, ep.Token} {
				if eu, err := url.Parse(e); err != nil || eu.Scheme+"://"+eu.Host != origin {
					return deviceEndpoints{}, fmt.Errorf("the metadata at %s names an endpoint off %s (%q): refused, as a re-pairing would send it your token", m, origin, e)
				}
			}
			return ep, nil
		}
		if prefix == "" {
			break
		}
		prefix = prefix[:strings.LastIndex(prefix, "/")]
	}
	return deviceEndpoints{Auth: addr + "/oauth/device_authorization", Token: addr + "/oauth/token"}, nil
}

// readDeviceMetadata reads one RFC 8414 document and reports whether it
// names a device authorization endpoint. A missing or unreadable document
// is not an error (the next place is tried); a request that gets no answer
// is: every place is on the same origin.
func readDeviceMetadata(ctx context.Context, hc *http.Client, metadataURL string) (deviceEndpoints, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return deviceEndpoints{}, false, nil
	}
	req.Header.Set("Accept", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return deviceEndpoints{}, false, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return deviceEndpoints{}, false, nil
	}
	var doc pairing.ServerMetadata
	if json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&doc) != nil || doc.DeviceAuthorizationEndpoint == "" || doc.TokenEndpoint == "" {
		return deviceEndpoints{}, false, nil
	}
	return deviceEndpoints{Auth: doc.DeviceAuthorizationEndpoint, Token: doc.TokenEndpoint}, true, nil
}
