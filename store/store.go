// Package store holds every query Arbiter makes of PostgreSQL (migrations holds the schema;
// server opens the pool; metrics reads the pool's statistics). One file per aggregate; every
// change runs in one transaction (InTx) together with its audit row and a NOTIFY that tells
// every replica's scheduler to reload its configuration.
package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ConfigChannel is the LISTEN/NOTIFY channel on which configuration changes are announced;
// the payload names the aggregate that changed (e.g. "workload_types").
const ConfigChannel = "arbiter_config"

// Store gives typed access to Arbiter's tables.
type Store struct {
	// pool bounds every call with a deadline (bounded.go): a stalled database fails calls
	// with ErrUnavailable instead of holding them forever.
	pool *boundedPool
	// configVersion counts configuration changes heard (made here, or announced by another
	// replica): caches of configuration compare it to know they are stale.
	configVersion atomic.Uint64
	hooksMu       sync.Mutex
	hooks         []func(aggregate string)
	skipped       func(what, uid string, err error) // OnRecordSkipped
	// nsRules are the namespace rules of project changes; nil: DefaultNamespaceRules.
	nsRules atomic.Pointer[NamespaceRules]
}

// New wraps a pgx pool; each database call is bounded by DefaultTimeout.
func New(pool *pgxpool.Pool) *Store { return NewWithTimeout(pool, DefaultTimeout) }

// NewWithTimeout wraps a pgx pool; each database call (a pool acquire, a query, a statement
// of a transaction) fails with ErrUnavailable once it has waited timeout (0: DefaultTimeout).
func NewWithTimeout(pool *pgxpool.Pool, timeout time.Duration) *Store {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Store{pool: &boundedPool{pool: pool, timeout: timeout}}
}

// Timeout is the deadline of each database call.
func (s *Store) Timeout() time.Duration { return s.pool.timeout }

// OnConfigChange adds a hook called after every configuration change: one committed in this
// process, or one another replica announced (see ConfigChanged).
func (s *Store) OnConfigChange(fn func(aggregate string)) {
	s.hooksMu.Lock()
	s.hooks = append(s.hooks, fn)
	s.hooksMu.Unlock()
}

// ConfigChanged records that the configuration changed and calls the hooks. changeConfig calls
// it after each commit; the server's LISTEN loop calls it for every NOTIFY on ConfigChannel, so
// other replicas' changes are heard too (a change made here is then heard twice: harmless).
func (s *Store) ConfigChanged(aggregate string) {
	s.configVersion.Add(1)
	s.hooksMu.Lock()
	hooks := s.hooks
	s.hooksMu.Unlock()
	for _, fn := range hooks {
		fn(aggregate)
	}
}

// ConfigVersion is the number of configuration changes heard so far.
func (s *Store) ConfigVersion() uint64 { return s.configVersion.Load() }

// Pool exposes the pool for health checks and tests.
func (s *Store) Pool() *pgxpool.Pool { return s.pool.pool }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return unavailable(err)
	}
	return nil
}

// InTx runs fn in one transaction: committed if fn returns nil, rolled back otherwise,
// so nothing is ever half-written.
func (s *Store) InTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	err := pgx.BeginFunc(ctx, s.pool, fn)
	return classify(err)
}

// changeConfig runs fn and the audit row in one transaction, notifies listeners of the
// aggregate's change on commit, and calls the in-process hook.
func (s *Store) changeConfig(ctx context.Context, aggregate string, entry AuditEntry, fn func(tx pgx.Tx, entry *AuditEntry) error) error {
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		if err := fn(tx, &entry); err != nil {
			return err
		}
		if err := insertAudit(ctx, tx, entry); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", ConfigChannel, aggregate)
		return err
	})
	if err == nil {
		s.ConfigChanged(aggregate)
	}
	return err
}

// seedNamespace is the UUID v5 namespace of seeded rows: UUIDv5(URL, "https://arbiter.dev/seed").
var seedNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://arbiter.dev/seed"))

// SeedID is the stable id of a seeded row, e.g. SeedID("priority", "high") or
// SeedID("workload-type", "batch/Job").
func SeedID(kind, name string) uuid.UUID {
	return uuid.NewSHA1(seedNamespace, []byte(kind+"/"+name))
}

// scanOne collects exactly one row into T by column name, mapping "no rows" to a NotFound
// error that says what was missing.
func scanOne[T any](rows pgx.Rows, err error, what string) (T, error) {
	var zero T
	if err != nil {
		return zero, classify(err)
	}
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[T])
	if errors.Is(err, pgx.ErrNoRows) {
		return zero, NotFound("%s was not found", what)
	}
	if err != nil {
		return zero, classify(err)
	}
	return v, nil
}

// scanAll collects every row into T by column name.
func scanAll[T any](rows pgx.Rows, err error) ([]T, error) {
	if err != nil {
		return nil, classify(err)
	}
	v, err := pgx.CollectRows(rows, pgx.RowToStructByName[T])
	if err != nil {
		return nil, classify(err)
	}
	return v, nil
}
