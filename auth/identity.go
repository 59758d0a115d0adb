// Package auth knows who is calling and what they may do: identities, roles at scopes, the one
// authorization rule (Allowed), password and API-key hashing, and the OIDC client. It does not
// talk to Postgres (the store keeps users, access rules and keys) nor to HTTP (web does).
package auth

import "context"

// Identity is the caller of a request.
type Identity struct {
	Subject     string // unique: user name, "iss sub" for OIDC users, key id for API keys
	SubjectType string // "user", "api-key", "system", "anonymous"
	DisplayName string
	Role        string // the caller's highest role, shown in the header
	UserID      string // the users row, for people
	Email       string
	Groups      []string
	Grants      []Grant // every role the caller holds, each at its scope
	// AccessKeyID is the person's own access key the request came with (Bearer, or a token
	// traded for it); empty for a session, a password's token or an OIDC token. A key acts
	// as its person but may not make, regenerate or delete keys.
	AccessKeyID string
}

// Anonymous is the identity of a request without credentials.
var Anonymous = Identity{Subject: "anonymous", SubjectType: "anonymous", DisplayName: "Anonymous"}

// LocalOperator is the in-process identity used by tools and tests that act as the system
// administrator without a request (e.g. seeding demo data).
var LocalOperator = Identity{Subject: "local-operator", SubjectType: "system", DisplayName: "Local operator",
	Role: string(RoleAdmin), Grants: []Grant{{Role: RoleAdmin, Scope: System}}}

// Authenticated reports whether the identity came from credentials.
func (id Identity) Authenticated() bool { return id.SubjectType != "" && id.SubjectType != "anonymous" }

// WithGrants returns id with grants set and Role set to the highest of them.
func (id Identity) WithGrants(grants []Grant) Identity {
	id.Grants = grants
	id.Role = string(HighestRole(grants))
	return id
}

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
