package migrations_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
)

// TestAccessKeysDownKeepsServiceAccounts: going below the schema of people's access keys
// removes those keys (they have no role to stand on) and keeps every service account's,
// renaming the older of two that share a name (a deleted one's name may be reused above, not
// below); going up again works.
func TestAccessKeysDownKeepsServiceAccounts(t *testing.T) {
	t.Parallel()
	s := newSchemaAt(t, 17)
	m, ctx, conn := s.m, s.ctx, s.conn
	exec := func(sql string, args ...any) {
		t.Helper()
		s.exec(t, sql, args...)
	}
	exec(`INSERT INTO users (id, issuer, subject) VALUES ('00000000-0000-4000-8000-0000000000aa', 'local', 'rita')`)
	exec(`INSERT INTO api_keys (id, name, secret_hash, owner_user_id, expires_at, created_by)
		VALUES ('00000000-0000-4000-8000-000000000001', 'laptop', '\x00', '00000000-0000-4000-8000-0000000000aa', now() + interval '1 day', 'rita')`)
	exec(`INSERT INTO api_keys (id, name, secret_hash, role, scope_type, expires_at, revoked_at, created_by, created_at)
		VALUES ('00000000-0000-4000-8000-000000000002', 'ci', '\x00', 'viewer', 'system', now() + interval '1 day', now(), 'admin', now() - interval '1 hour')`)
	exec(`INSERT INTO api_keys (id, name, secret_hash, role, scope_type, expires_at, created_by)
		VALUES ('00000000-0000-4000-8000-000000000003', 'ci', '\x00', 'viewer', 'system', now() + interval '1 day', 'admin')`)

	if err := m.Steps(-1); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT id::text || ' ' || name FROM api_keys ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"00000000-0000-4000-8000-000000000002 ci (00000000-0000-4000-8000-000000000002)", "00000000-0000-4000-8000-000000000003 ci"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("keys below the access keys' schema (-want +got):\n%s", d)
	}
	if err := m.Steps(1); err != nil {
		t.Fatal(err)
	}
}
