// Package auth knows who is calling and what they may do. Until login arrives (issue 7) one
// middleware puts the local operator's identity in every request's context; authentication
// replaces that middleware and nothing else.
package auth

import "context"

// Identity is the caller of a request.
type Identity struct {
	Subject     string // unique: user name, "iss sub" for OIDC users, key id for API keys
	SubjectType string // "user", "api-key", "system"
	DisplayName string
	Role        string // the caller's highest role, shown in the header
}

// LocalOperator is the identity of whoever reaches a console bound to loopback before login
// exists: the person at this machine.
var LocalOperator = Identity{Subject: "local-operator", SubjectType: "user", DisplayName: "Local operator", Role: "admin"}

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the caller's identity, and false when the request has none.
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}
