package migrations_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/golang-migrate/migrate/v4"
	"github.com/jackc/pgx/v5"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
)

// schemaAt is a fresh database migrated up to one version, to fill with rows of that schema
// before a migration runs over them: its migrator (to go on up or down), and a connection
// with a minute's deadline.
type schemaAt struct {
	m    *migrate.Migrate
	ctx  context.Context
	conn *pgx.Conn
}

func newSchemaAt(t *testing.T, version uint) *schemaAt {
	t.Helper()
	dbURL := testdb.NewURL(t)
	m := migrator(t, dbURL)
	if err := m.Migrate(version); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return &schemaAt{m: m, ctx: ctx, conn: conn}
}

// exec runs a statement, or fails the test naming it.
func (s *schemaAt) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := s.conn.Exec(s.ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
