package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// TestTextPostgreSQLRefusesIsInvalidNotAFailure: should text PostgreSQL cannot store get past
// the web layer's checks, the store still says ErrInvalid (a 400), not an unclassified error
// (a 500): NUL and bytes that are not UTF-8 in a text column (22021), \u0000 in jsonb (22P05),
// and a value too large for an index entry (54000).
func TestTextPostgreSQLRefusesIsInvalidNotAFailure(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	key := func(name string) error {
		_, err := st.CreateAPIKey(ctx, store.NewAPIKey{ID: uuid.New(), Name: name, Role: "viewer", ScopeType: "system",
			ExpiresAt: time.Now().Add(time.Hour), SecretHash: []byte("x")}, operator)
		return err
	}
	// Random text compresses little, so 20 kB of it exceeds a btree entry's ~2.7 kB.
	var long strings.Builder
	for range 600 {
		long.WriteString(uuid.NewString())
	}
	cases := map[string]func() error{
		"NUL in a text column": func() error { return key("a\x00b") },
		"invalid UTF-8":        func() error { return key("a\xffb") },
		"NUL in a search":      func() error { _, err := st.LocalUser(ctx, "x\x00"); return err },
		"\\u0000 in jsonb": func() error {
			return st.RecordAudit(ctx, store.AuditEntry{Subject: "s", SubjectType: "user", Action: "a", EntityType: "e", Result: "failure", Changes: map[string]any{"error": "a\x00"}})
		},
		"too long for a unique name": func() error { return key(long.String()) },
	}
	for name, f := range cases {
		err := f()
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", name, err)
		}
	}
}
