package mcpauth

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/pairing"
)

// MaxRegistrationBody is the largest registration body read, in bytes.
const MaxRegistrationBody = 8 << 10

// Registration error codes (RFC 7591 section 3.2.2).
const (
	ErrInvalidRedirectURI    = "invalid_redirect_uri"
	ErrInvalidClientMetadata = "invalid_client_metadata"
)

// Registration is a checked client registration request (RFC 7591).
type Registration struct {
	Name            string
	RedirectURIs    []string
	ApplicationType string
}

// registrationBody is the part of a registration request read.
type registrationBody struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod *string  `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ApplicationType         string   `json:"application_type"`
}

// ParseRegistration checks a registration body: a JSON object with 1 to 5
// redirect_uris (CheckRedirectURI), token_endpoint_auth_method none (or
// absent), grant_types among authorization_code and refresh_token,
// response_types only code, application_type native or web (default
// native). Errors are *pairing.Error with the codes of RFC 7591.
func ParseRegistration(body []byte) (*Registration, error) {
	var b registrationBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, metadataError("the body must be a JSON object of client metadata")
	}
	if len(b.RedirectURIs) < 1 || len(b.RedirectURIs) > 5 {
		return nil, &pairing.Error{Code: ErrInvalidRedirectURI, Description: "redirect_uris must hold 1 to 5 URIs"}
	}
	for _, u := range b.RedirectURIs {
		if err := CheckRedirectURI(u); err != nil {
			return nil, &pairing.Error{Code: ErrInvalidRedirectURI, Description: err.Error()}
		}
	}
	if m := b.TokenEndpointAuthMethod; m != nil && *m != "none" {
		return nil, metadataError("token_endpoint_auth_method must be none: clients are public, with PKCE")
	}
	for _, g := range b.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return nil, metadataError("grant_types may hold only authorization_code and refresh_token")
		}
	}
	if len(b.GrantTypes) > 0 && !slices.Contains(b.GrantTypes, "authorization_code") {
		return nil, metadataError("grant_types must include authorization_code")
	}
	for _, r := range b.ResponseTypes {
		if r != "code" {
			return nil, metadataError("response_types may hold only code")
		}
	}
	switch b.ApplicationType {
	case "":
		b.ApplicationType = "native"
	case "native", "web":
	default:
		return nil, metadataError("application_type must be native or web")
	}
	name := pairing.CleanText(b.ClientName)
	if name == "" {
		name = "MCP client"
	}
	return &Registration{Name: name, RedirectURIs: slices.Clone(b.RedirectURIs), ApplicationType: b.ApplicationType}, nil
}

func metadataError(desc string) *pairing.Error {
	return &pairing.Error{Code: ErrInvalidClientMetadata, Description: desc}
}

// Register checks and stores a client registration from requester (its
// clientaddr.Key). ERATELIMITED past Config.RegistrationsPerHour from one
// address; EQUOTA when Config.MaxClients are registered and none can make
// room (see MaxClients).
func (s *Service) Register(ctx context.Context, body []byte, requester string) (*switchboard.OAuthClient, error) {
	reg, err := ParseRegistration(body)
	if err != nil {
		return nil, err
	}
	now := s.now()
	c := &switchboard.OAuthClient{ID: "sbc_" + switchboard.NewID(), Name: reg.Name, RedirectURIs: reg.RedirectURIs,
		ApplicationType: reg.ApplicationType, Requester: requester, CreatedAt: now}
	err = s.Store.CreateOAuthClient(ctx, c, switchboard.OAuthClientLimits{PerRequester: s.cfg.RegistrationsPerHour, Window: time.Hour,
		MaxClients: s.cfg.MaxClients, PruneBefore: now.Add(-PruneAfter), UnusedBefore: now.Add(-PruneUnusedAfter)})
	if err != nil {
		return nil, err
	}
	s.Logger.Info("mcp oauth client registered", "client_id", c.ID, "client_name", c.Name)
	return c, nil
}
