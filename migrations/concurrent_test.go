package migrations_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/migrations"
)

// TestConcurrentUpOnFreshDatabase: replicas starting together against an empty database all
// start (none fails on a half-made schema or a duplicate object) and leave the schema at the
// latest version, clean, with each migration applied once.
func TestConcurrentUpOnFreshDatabase(t *testing.T) {
	dbURL := testdb.NewURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Empty it entirely, the version table too: a database as a new installation has it.
	if _, err := conn.Exec(ctx, "drop schema public cascade; create schema public"); err != nil {
		t.Fatal(err)
	}
	// The migrations' advisory lock, held here, holds every migrator back: they must wait.
	if _, err := conn.Exec(ctx, "select pg_advisory_lock($1)", int64(0x417262697465720)); err != nil {
		t.Fatal(err)
	}
	const replicas = 4
	errs := make(chan error, replicas)
	var wg sync.WaitGroup
	for range replicas {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- migrations.Up(dbURL) }()
	}
	// While the lock is held, nobody has created anything.
	poll.UntilNil(t, "every migrator waits on the advisory lock", 30*time.Second, func() error {
		var n int
		if err := conn.QueryRow(ctx, `select count(*) from pg_locks where locktype = 'advisory' and not granted
			and database = (select oid from pg_database where datname = current_database())`).Scan(&n); err != nil {
			return err
		}
		if n != replicas {
			return fmt.Errorf("%d of %d migrators waiting", n, replicas)
		}
		return nil
	})
	var tables int
	if err := conn.QueryRow(ctx, `select count(*) from pg_tables where schemaname = 'public'`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("tables created while the lock was held: %d (%v)", tables, err)
	}
	if _, err := conn.Exec(ctx, "select pg_advisory_unlock($1)", int64(0x417262697465720)); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a concurrent migrator failed: %v", err)
		}
	}
	v, dirty, applied, err := migrations.Version(dbURL)
	if err != nil || !applied || dirty || v != migrations.Latest() {
		t.Fatalf("version %d dirty=%v applied=%v err=%v; want %d, clean", v, dirty, applied, err, migrations.Latest())
	}
}
