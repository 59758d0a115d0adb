package web_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/uuid"
)

// deps are the web layer's dependencies over st, with sessions in the same database.
func deps(st *store.Store) web.Deps {
	return web.Deps{Properties: st, Audit: st, Ready: st.Ping, Log: quiet, Users: st,
		Login: web.LoginConfig{Sessions: st.Sessions(0)}, Organization: st, Usage: st}
}

// tokens maps a test server's URL to the bearer token do sends.
var tokens sync.Map

// signIn makes do call srv with token.
func signIn(srv *httptest.Server, token string) { tokens.Store(srv.URL, token) }

func tokenOf(srv *httptest.Server) string {
	t, _ := tokens.Load(srv.URL)
	s, _ := t.(string)
	return s
}

// newAPIKey creates an API key with role at scope (scopeID empty for system) directly in
// the store, as the system, and returns its token.
func newAPIKey(t testing.TB, st *store.Store, role, scopeType, scopeID string) string {
	t.Helper()
	id := uuid.New()
	token, hash := auth.NewAPIKey(id)
	n := store.NewAPIKey{ID: id, Name: "test-" + role + "-" + id.String()[:8], Role: role, ScopeType: scopeType,
		ExpiresAt: time.Now().Add(time.Hour), SecretHash: hash}
	if scopeID != "" {
		sid := uuid.MustParse(scopeID)
		n.ScopeID = &sid
	}
	if _, err := st.CreateAPIKey(context.Background(), n, store.Actor{Subject: "test", SubjectType: "system"}); err != nil {
		t.Fatal(err)
	}
	return token
}

// auditRows returns the audit rows about entityType, newest first.
func auditRows(t *testing.T, st *store.Store, entityType string) []store.AuditEntry {
	t.Helper()
	all, err := st.AuditEntries(context.Background(), 500)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.AuditEntry
	for _, e := range all {
		if e.EntityType == entityType {
			out = append(out, e)
		}
	}
	return out
}
