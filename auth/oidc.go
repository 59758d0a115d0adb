package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// OIDCConfig configures the OIDC client.
type OIDCConfig struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	RedirectURL  string
	GroupsClaim  string // the ID token claim that lists the user's groups, default "groups"
}

// OIDC runs the authorization code flow with PKCE, state and nonce, and verifies ID tokens
// and bearer tokens from the configured issuer.
type OIDC struct {
	provider    *oidc.Provider
	oauth       oauth2.Config
	verifier    *oidc.IDTokenVerifier
	groupsClaim string
	// HTTPClient, when set, is used to talk to the provider (tests).
	HTTPClient *http.Client
}

// Claims are what Arbiter keeps of a verified token.
type Claims struct {
	Issuer, Subject, Email, Name string
	Groups                       []string
}

// NewOIDC discovers the issuer's endpoints and keys.
func NewOIDC(ctx context.Context, c OIDCConfig) (*OIDC, error) {
	p, err := oidc.NewProvider(ctx, c.Issuer)
	if err != nil {
		return nil, fmt.Errorf("OIDC discovery at %s: %w", c.Issuer, err)
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = "groups"
	}
	return &OIDC{
		provider: p,
		oauth: oauth2.Config{
			ClientID: c.ClientID, ClientSecret: c.ClientSecret, RedirectURL: c.RedirectURL,
			Endpoint: p.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "profile", "email", "groups"},
		},
		verifier:    p.Verifier(&oidc.Config{ClientID: c.ClientID}),
		groupsClaim: c.GroupsClaim,
	}, nil
}

// AuthCodeURL is where the browser goes to sign in; state, nonce and the PKCE verifier are
// kept in the caller's session until the callback.
func (o *OIDC) AuthCodeURL(state, nonce, verifier string) string {
	return o.oauth.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier))
}

// NewVerifier returns a fresh PKCE code verifier.
func NewVerifier() string { return oauth2.GenerateVerifier() }

// ErrExpired says the token's expiry has passed.
var ErrExpired = errors.New("the token has expired")

func verifyError(err error) error {
	var exp *oidc.TokenExpiredError
	if errors.As(err, &exp) {
		return fmt.Errorf("%w: %v", ErrExpired, err)
	}
	return err
}

// ErrNonce says the ID token's nonce is not the one this login sent.
var ErrNonce = errors.New("the ID token's nonce does not match this login")

// Exchange trades the callback's code for tokens and verifies the ID token (issuer, audience,
// expiry, signature) and its nonce.
func (o *OIDC) Exchange(ctx context.Context, code, verifier, nonce string) (Claims, error) {
	tok, err := o.oauth.Exchange(o.ctx(ctx), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return Claims{}, fmt.Errorf("token exchange: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return Claims{}, errors.New("the provider answered without an ID token")
	}
	idt, err := o.verifier.Verify(o.ctx(ctx), raw)
	if err != nil {
		return Claims{}, verifyError(err)
	}
	if idt.Nonce != nonce {
		return Claims{}, ErrNonce
	}
	return o.claims(idt)
}

// VerifyBearer verifies a bearer token from the issuer: an ID token, or an access token that is
// a JWT issued for this client.
func (o *OIDC) VerifyBearer(ctx context.Context, raw string) (Claims, error) {
	idt, err := o.verifier.Verify(o.ctx(ctx), raw)
	if err != nil {
		return Claims{}, verifyError(err)
	}
	return o.claims(idt)
}

func (o *OIDC) claims(idt *oidc.IDToken) (Claims, error) {
	var all map[string]any
	if err := idt.Claims(&all); err != nil {
		return Claims{}, err
	}
	c := Claims{Issuer: idt.Issuer, Subject: idt.Subject}
	c.Email, _ = all["email"].(string)
	c.Name, _ = all["name"].(string)
	if c.Name == "" {
		c.Name, _ = all["preferred_username"].(string)
	}
	switch g := all[o.groupsClaim].(type) {
	case []any:
		for _, x := range g {
			if s, ok := x.(string); ok {
				c.Groups = append(c.Groups, s)
			}
		}
	case string:
		c.Groups = []string{g}
	}
	return c, nil
}

func (o *OIDC) ctx(ctx context.Context) context.Context {
	if o.HTTPClient != nil {
		return oidc.ClientContext(ctx, o.HTTPClient)
	}
	return ctx
}
