package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	pathpkg "path"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"golang.org/x/oauth2"
)

// PairCmd asks a remote agent for a peer token with the OAuth 2.0 device
// authorization grant (RFC 8628) and stores it under an alias.
type PairCmd struct {
	URL   string `arg:"" name:"url" help:"The agent's address, e.g. https://host/a/alice."`
	Name  string `name:"name" help:"The name you give yourself (shown to the agent's owner; default: the alias)."`
	Alias string `name:"alias" help:"Alias to store the token under (default: the last part of the URL)."`
	// AllowPrivate is stored with the alias, as peers add does.
	AllowPrivate bool `name:"allow-private" help:"The agent is on a private network or loopback: allow sending there."`
}

// Run pairs: finds the device flow's endpoints (discoverDevice), asks for a code, prints it with the link the owner opens,
// polls at the server's interval (slower after each slow_down) until the
// owner decides or the code expires, then stores the token (never printed)
// in peers.json. Pairing again with an alias that holds a token of the
// same address presents that token: an approval replaces it.
func (c *PairCmd) Run(ctx context.Context, cli *CLI) error {
	addr := strings.TrimRight(c.URL, "/")
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("%q is not an http(s) URL without credentials", c.URL)
	}
	alias := c.Alias
	if alias == "" {
		alias = pathpkg.Base(u.Path)
		if alias == "/" || alias == "." || alias == "" {
			alias = u.Hostname()
		}
	}
	if !switchboard.ValidAlias(alias) {
		return fmt.Errorf("alias %q: use 1 to 64 of A-Z a-z 0-9 _ . - (pass --alias)", alias)
	}
	name := c.Name
	if name == "" {
		name = alias
	}
	dir, err := cli.configDir()
	if err != nil {
		return err
	}
	cfg, err := loadPeers(dir)
	if err != nil {
		return err
	}
	var current string
	if p, ok := cfg.Peers[alias]; ok && p.URL == addr {
		current = p.token()
	}

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 30 * time.Second
	defer tr.CloseIdleConnections()
	ep, err := discoverDevice(ctx, &http.Client{Transport: tr, Timeout: 30 * time.Second, CheckRedirect: noRedirects}, addr)
	if err != nil {
		return fmt.Errorf("find where %s takes pairing requests: %w", addr, err)
	}
	conf := &oauth2.Config{ClientID: name, Scopes: []string{"a2a"}, Endpoint: oauth2.Endpoint{
		DeviceAuthURL: ep.Auth, TokenURL: ep.Token, AuthStyle: oauth2.AuthStyleInParams,
	}}
	hc := &http.Client{Transport: &repairTransport{next: tr, authURL: conf.Endpoint.DeviceAuthURL, token: current}}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	da, err := conf.DeviceAuth(ctx, oauth2.SetAuthURLParam("client_name", name))
	if err != nil {
		return fmt.Errorf("ask %s for a code: %w", addr, describeOAuthError(err))
	}
	link := da.VerificationURIComplete
	if link == "" {
		link = da.VerificationURI
	}
	fmt.Fprintf(cli.out, "code: %s\n", da.UserCode)
	fmt.Fprintf(cli.out, "ask the agent's owner to approve it at %s\n", link)
	fmt.Fprintf(cli.out, "(or: switchboard pairing approve %s)\nwaiting", da.UserCode)
	if current != "" {
		fmt.Fprintf(cli.out, " (an approval replaces the token stored under %q)", alias)
	}
	fmt.Fprintln(cli.out, "…")
	tok, err := conf.DeviceAccessToken(ctx, da)
	if err != nil {
		return fmt.Errorf("pairing with %s: %w", addr, describeOAuthError(err))
	}
	label, _ := tok.Extra("peer_label").(string)
	cfg.Peers[alias] = &peerEntry{URL: addr, Token: tok.AccessToken, AllowPrivate: c.AllowPrivate, AddedAt: time.Now().UTC()}
	if err := cfg.save(dir); err != nil {
		return err
	}
	fmt.Fprintf(cli.out, "paired: token labelled %q stored under alias %s (%s)\n", label, alias, cfg.Peers[alias].tokenStatus())
	if agent := cli.defaultAgent(); agent != "" {
		fmt.Fprintf(cli.out, "send with: switchboard send %s --text 'hello'\n", alias)
	} else {
		fmt.Fprintf(cli.out, "send with: switchboard send %s --text 'hello' --agent YOUR_AGENT_HANDLE\n", alias)
	}
	return nil
}

// noRedirects makes a client return a redirect instead of following it.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// repairTransport presents the token an alias holds on the device
// authorization request only, which makes the request a re-pairing.
type repairTransport struct {
	next    http.RoundTripper
	authURL string
	token   string
}

// RoundTrip implements http.RoundTripper.
func (t *repairTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.token != "" && r.URL.String() == t.authURL {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	return t.next.RoundTrip(r)
}

// describeOAuthError turns an OAuth error answer into a sentence.
func describeOAuthError(err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return err
	}
	if re.Response != nil && re.Response.StatusCode == http.StatusNotFound {
		return errors.New("the agent does not take pairing requests (ask its owner for a token)")
	}
	switch re.ErrorCode {
	case "access_denied":
		return errors.New("the owner denied the request")
	case "expired_token":
		return errors.New("the code expired before it was approved; run switchboard pair again")
	case "slow_down":
		return fmt.Errorf("the server is refusing requests for now (%s); try again later", re.ErrorDescription)
	case "":
		if re.Response != nil {
			return fmt.Errorf("HTTP %d", re.Response.StatusCode)
		}
	}
	return fmt.Errorf("%s: %s", re.ErrorCode, re.ErrorDescription)
}
