// Package migrations holds Arbiter's schema as embedded SQL and runs it with golang-migrate.
package migrations

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers the pgx5:// scheme
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
)

// lockKey is the PostgreSQL advisory lock Arbiter's migrations run under ("Arbiter" in ASCII),
// so that replicas starting together migrate one after the other: the first applies what is
// missing, the others then find nothing to do. golang-migrate takes a lock of its own too, but
// only around each step; this one covers the whole run, connection included.
const lockKey int64 = 0x417262697465720

// LockTimeout bounds the wait for another replica's migrations.
var LockTimeout = 5 * time.Minute

// locked runs f while holding the migrations' advisory lock on a connection of its own.
func locked(databaseURL string, f func() error) error {
	ctx, cancel := context.WithTimeout(context.Background(), LockTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("migrations: connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "select pg_advisory_lock($1)", lockKey); err != nil {
		return fmt.Errorf("migrations: wait for other replicas' migrations: %w", err)
	}
	defer func() {
		unlockCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Closing the connection releases the lock anyway, should this fail.
		_, _ = conn.Exec(unlockCtx, "select pg_advisory_unlock($1)", lockKey)
	}()
	return f()
}

//go:embed *.sql
var files embed.FS

// open returns a migrator for the database at databaseURL (a postgres:// URL or DSN URL).
func open(databaseURL string) (*migrate.Migrate, error) {
	src, err := iofs.New(files, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations: read embedded files: %w", err)
	}
	u, err := url.Parse(databaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, errors.New("migrations: the database URL must start with postgres://")
	}
	u.Scheme = "pgx5"
	m, err := migrate.NewWithSourceInstance("iofs", src, u.String())
	if err != nil {
		return nil, fmt.Errorf("migrations: connect: %w", err)
	}
	return m, nil
}

// Up applies every migration not yet applied, under the migrations' advisory lock.
func Up(databaseURL string) error {
	return locked(databaseURL, func() error { return up(databaseURL) })
}

func up(databaseURL string) error {
	m, err := open(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrations: up: %w", err)
	}
	return nil
}

// Down reverts every applied migration, under the migrations' advisory lock.
func Down(databaseURL string) error {
	return locked(databaseURL, func() error { return down(databaseURL) })
}

func down(databaseURL string) error {
	m, err := open(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Down(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrations: down: %w", err)
	}
	return nil
}

// To migrates up or down to version, under the migrations' advisory lock: a test of one
// migration's down step uses it to stop right below that migration.
func To(databaseURL string, version uint) error {
	return locked(databaseURL, func() error {
		m, err := open(databaseURL)
		if err != nil {
			return err
		}
		defer m.Close()
		if err := m.Migrate(version); err != nil && !errors.Is(err, migrate.ErrNoChange) {
			return fmt.Errorf("migrations: to %d: %w", version, err)
		}
		return nil
	})
}

// Version reports the applied schema version, whether the last migration failed halfway
// (dirty), and false when no migration has been applied yet.
func Version(databaseURL string) (version uint, dirty bool, applied bool, err error) {
	m, err := open(databaseURL)
	if err != nil {
		return 0, false, false, err
	}
	defer m.Close()
	v, d, err := m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, false, nil
	}
	if err != nil {
		return 0, false, false, fmt.Errorf("migrations: version: %w", err)
	}
	return v, d, true, nil
}

// Latest is the highest migration version embedded in this binary.
func Latest() uint {
	entries, _ := files.ReadDir(".")
	var latest uint
	for _, e := range entries {
		var v uint
		if _, err := fmt.Sscanf(e.Name(), "%d_", &v); err == nil && strings.HasSuffix(e.Name(), ".up.sql") && v > latest {
			latest = v
		}
	}
	return latest
}
