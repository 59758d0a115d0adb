// Package testdb gives each test its own migrated PostgreSQL database, cloned from a template
// (the pgtestdb pattern): the schema is migrated once per server into a template database, and
// each test gets `CREATE DATABASE test_<random> TEMPLATE <template>`, a file copy of a few
// milliseconds, dropped when the test ends. Tests can therefore run in parallel and never see
// each other's rows.
//
// The server is the one named by ARBITER_TEST_DATABASE_URL (any database on it; the role must
// be allowed to create databases), or else a throwaway pglocal server that the test binary
// starts on first use and shares between all its tests.
//
// Go has no hook that runs after all tests outside TestMain, so that private server is cleaned
// up in two ways: packages that call Main from TestMain stop it and remove its directory when
// their tests end; in any case the kernel kills it when the test binary exits (Pdeathsig), and
// only its temporary directory under $TMPDIR (arbiter-pg-*) stays behind.
//
//	func TestMain(m *testing.M) { testdb.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		pool := testdb.New(t)
//		...
//	}
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arbiterhq/arbiter/internal/dev/pglocal"
	"github.com/arbiterhq/arbiter/migrations"
)

// EnvURL names the environment variable that points the tests at an existing server.
const EnvURL = "ARBITER_TEST_DATABASE_URL"

// templateLockKey is the advisory lock that serialises template creation between test binaries
// sharing one server (go test ./... runs packages in parallel). Any fixed value will do.
const templateLockKey int64 = 0x61726269746572 // "arbiter"

// setupTimeout bounds starting the private server plus migrating the template.
const setupTimeout = 3 * time.Minute

// env is the state shared by all tests of one test binary.
type env struct {
	server   *pglocal.Server // nil when EnvURL names the server
	baseURL  *url.URL        // the server, with the database path to be replaced
	admin    *pgxpool.Pool   // runs CREATE/DROP DATABASE
	template string
}

var (
	setupOnce sync.Once
	shared    *env
	setupErr  error
)

// New returns a pool connected to a fresh, migrated database of its own, which is dropped when
// the test ends (the pool is closed first).
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dbURL := NewURL(t)
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	// Cleanups run last-registered first: the pool closes before NewURL's cleanup drops the database.
	t.Cleanup(pool.Close)
	return pool
}

// NewURL creates a fresh, migrated database and returns its URL; the database is dropped when
// the test ends, forcibly closing connections the test left open.
func NewURL(t testing.TB) string {
	t.Helper()
	e, err := get()
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name, err := e.clone(ctx)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := e.drop(ctx, name); err != nil {
			t.Errorf("testdb: %v", err)
		}
	})
	return e.urlOf(name)
}

// clone creates a database from the template and returns its name.
func (e *env) clone(ctx context.Context) (string, error) {
	name := "test_" + randomHex(8)
	if _, err := e.admin.Exec(ctx, fmt.Sprintf("create database %s template %s strategy file_copy",
		pgx.Identifier{name}.Sanitize(), pgx.Identifier{e.template}.Sanitize())); err != nil {
		return "", fmt.Errorf("clone the template database: %w", err)
	}
	return name, nil
}

// drop removes a clone, forcibly closing connections the test left open.
func (e *env) drop(ctx context.Context, name string) error {
	if _, err := e.admin.Exec(ctx, "drop database if exists "+pgx.Identifier{name}.Sanitize()+" with (force)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// Main runs the tests of a package, then the given cleanups (e.g. stopping a cluster the
// tests shared), then stops the private server, if this binary started one, and removes its
// data directory. Call it from TestMain; it does not return.
func Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testdb:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// get sets up the shared state on first use.
func get() (*env, error) {
	setupOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		shared, setupErr = setup(ctx)
	})
	return shared, setupErr
}

func setup(ctx context.Context) (*env, error) {
	e := &env{template: "arbiter_template_" + migrations.Hash()[:16]}
	rawURL := os.Getenv(EnvURL)
	if rawURL == "" {
		server, err := pglocal.Start(ctx, pglocal.Options{Throwaway: true})
		if err != nil {
			return nil, fmt.Errorf("start a private PostgreSQL (or set %s): %w", EnvURL, err)
		}
		e.server = server
		rawURL = server.URL("postgres")
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		e.close()
		return nil, fmt.Errorf("%s: %w", EnvURL, err)
	}
	e.baseURL = u
	if e.admin, err = pgxpool.New(ctx, rawURL); err != nil {
		e.close()
		return nil, err
	}
	if err := e.ensureTemplate(ctx); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// ensureTemplate creates and migrates the template database unless a complete one exists.
// A template is complete once it is marked IS_TEMPLATE, the last step; one left incomplete by
// a binary that died halfway is dropped and built again.
func (e *env) ensureTemplate(ctx context.Context) error {
	conn, err := e.admin.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	// A session lock, held on this one connection while the template is built.
	if _, err := conn.Exec(ctx, "select pg_advisory_lock($1)", templateLockKey); err != nil {
		return fmt.Errorf("lock template creation: %w", err)
	}
	defer conn.Exec(context.Background(), "select pg_advisory_unlock($1)", templateLockKey)

	var isTemplate bool
	err = conn.QueryRow(ctx, "select datistemplate from pg_database where datname = $1", e.template).Scan(&isTemplate)
	switch {
	case err == nil && isTemplate:
		return nil
	case err == nil:
		if _, err := conn.Exec(ctx, "drop database "+pgx.Identifier{e.template}.Sanitize()+" with (force)"); err != nil {
			return fmt.Errorf("drop incomplete template %s: %w", e.template, err)
		}
	case err != pgx.ErrNoRows:
		return err
	}

	ident := pgx.Identifier{e.template}.Sanitize()
	if _, err := conn.Exec(ctx, "create database "+ident); err != nil {
		return fmt.Errorf("create template %s: %w", e.template, err)
	}
	if err := migrations.Up(e.urlOf(e.template)); err != nil {
		return fmt.Errorf("migrate template %s: %w", e.template, err)
	}
	// No connections from now on: a session open on the template makes every clone fail with
	// "source database is being accessed by other users".
	if _, err := conn.Exec(ctx, "alter database "+ident+" with is_template true allow_connections false"); err != nil {
		return fmt.Errorf("mark %s as template: %w", e.template, err)
	}
	return nil
}

func (e *env) urlOf(dbname string) string {
	u := *e.baseURL
	u.Path = "/" + dbname
	u.RawPath = ""
	return u.String()
}

func (e *env) close() error {
	if e.admin != nil {
		e.admin.Close()
	}
	if e.server != nil {
		return e.server.Stop()
	}
	return nil
}

func stop() error {
	if shared == nil {
		return nil
	}
	return shared.close()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
