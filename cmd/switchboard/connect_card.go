package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/front"
)

// How often connect --forward reads its server's card again, and how soon
// it tries again when the server did not answer.
const (
	cardRefresh = 10 * time.Minute
	cardRetry   = 30 * time.Second
)

// publishCards publishes the card of the forward target for the agent's
// address, now and again every cardRefresh when it changed, until ctx
// ends. A target that serves no card is tried again every cardRetry; the
// address meanwhile serves the card the owner's settings make.
func (f *forwarder) publishCards(ctx context.Context, client *connector.Client) {
	var last []byte
	for {
		wait := cardRefresh
		card, err := f.readCard(ctx)
		switch {
		case err != nil:
			f.log.Warn("read the forward server's agent card (the address shows the card of the agent's settings meanwhile)", "err", front.Describe(err, f.secrets))
			wait = cardRetry
		case !bytes.Equal(card, last):
			// The target as the owner may see it: its query values and
			// user information cut (its host is what the server needs).
			if err := client.PublishCard(ctx, front.RedactURL(f.target), card); err != nil {
				if stop := publishRefused(err, f.log); stop {
					return
				}
				wait = cardRetry
				break
			}
			last = card
			f.log.Info("published the forward server's agent card at the agent's address")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// readCard reads the target's card, 1.0 or 0.3, as the 1.0 JSON the
// server reads, without the value of --forward-token in any of its
// strings: a server may reflect the headers it is sent into its card.
func (f *forwarder) readCard(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	card, err := front.ResolveCard(ctx, f.hc, f.target, "")
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(card)
	if err != nil || f.secrets == nil {
		return raw, err
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return json.Marshal(f.secrets.Value(doc))
}

// forgetCard forgets the card an earlier connect --forward published, for
// a connector that publishes none.
func forgetCard(ctx context.Context, client *connector.Client, log *slog.Logger) {
	if err := client.PublishCard(ctx, "", nil); err != nil {
		publishRefused(err, log)
	}
}

// publishRefused logs a PublishCard the server refused, and reports
// whether trying again is pointless (a server that does not know the
// method, or refuses the card).
func publishRefused(err error, log *slog.Logger) bool {
	var e *connproto.Error
	switch {
	case errors.Is(err, context.Canceled):
		return true
	case errors.As(err, &e) && e.Code == connproto.CodeMethodNotFound:
		log.Info("this server does not take published cards; the address shows the card of the agent's settings")
		return true
	case errors.As(err, &e) && e.Code == connproto.CodeInvalidParams:
		log.Warn("the server refused the forward server's agent card", "err", err)
		return true
	}
	log.Warn("publish the forward server's agent card", "err", err)
	return false
}
