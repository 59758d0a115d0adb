package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTimeout bounds each database call when New is given none: a pool acquire, a query
// (until its rows are closed), a statement of a transaction.
const DefaultTimeout = 5 * time.Second

// boundedPool is the pool as the store uses it: every call runs under a deadline of at most
// timeout (an earlier deadline of the caller's context wins). A stalled server (frozen, or a
// network that drops packets) would otherwise hold a call forever, since TCP never reports
// it; when the deadline passes, pgx interrupts the read, closes that connection, and the pool
// discards it, so the next call starts afresh on a new connection.
type boundedPool struct {
	pool    *pgxpool.Pool
	timeout time.Duration
}

func (p *boundedPool) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.timeout)
}

// Query's deadline lasts until the rows are closed (pgx.CollectRows and friends close them).
func (p *boundedPool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return boundedQuery(ctx, p.timeout, p.pool.Query, sql, args)
}

func (p *boundedPool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := p.Query(ctx, sql, args...)
	return errRow{rows: rows, err: err}
}

func (p *boundedPool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	return p.pool.Exec(ctx, sql, args...)
}

// Acquire bounds waiting for a connection; what the caller then does with it is its own.
func (p *boundedPool) Acquire(ctx context.Context) (*pgxpool.Conn, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	return p.pool.Acquire(ctx)
}

func (p *boundedPool) Ping(ctx context.Context) error {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	return p.pool.Ping(ctx)
}

func (p *boundedPool) Begin(ctx context.Context) (pgx.Tx, error) {
	return p.BeginTx(ctx, pgx.TxOptions{})
}

// BeginTx returns a transaction each statement of which (Commit and Rollback included) runs
// under its own deadline.
func (p *boundedPool) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	bctx, cancel := p.bound(ctx)
	defer cancel()
	tx, err := p.pool.BeginTx(bctx, opts)
	if err != nil {
		return nil, err
	}
	return &boundedTx{Tx: tx, timeout: p.timeout}, nil
}

// boundedTx bounds the statements the store runs in a transaction.
type boundedTx struct {
	pgx.Tx
	timeout time.Duration
}

func (t *boundedTx) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, t.timeout)
}

func (t *boundedTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return boundedQuery(ctx, t.timeout, t.Tx.Query, sql, args)
}

func (t *boundedTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := t.Query(ctx, sql, args...)
	return errRow{rows: rows, err: err}
}

func (t *boundedTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Tx.Exec(ctx, sql, args...)
}

// SendBatch's deadline lasts until the results are closed.
func (t *boundedTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	ctx, cancel := t.bound(ctx)
	return &cancelBatch{BatchResults: t.Tx.SendBatch(ctx, b), cancel: cancel}
}

func (t *boundedTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Tx.CopyFrom(ctx, table, columns, src)
}

func (t *boundedTx) Commit(ctx context.Context) error {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Tx.Commit(ctx)
}

func (t *boundedTx) Rollback(ctx context.Context) error {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Tx.Rollback(ctx)
}

func boundedQuery(ctx context.Context, timeout time.Duration, query func(context.Context, string, ...any) (pgx.Rows, error), sql string, args []any) (pgx.Rows, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	rows, err := query(ctx, sql, args...)
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelRows{Rows: rows, cancel: cancel}, nil
}

// cancelRows releases its deadline's timer when the rows are closed.
type cancelRows struct {
	pgx.Rows
	cancel context.CancelFunc
}

func (r *cancelRows) Close() {
	r.Rows.Close()
	r.cancel()
}

// Next closes the rows (and so releases the deadline) after the last one, as pgx does.
func (r *cancelRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.cancel()
	return false
}

type cancelBatch struct {
	pgx.BatchResults
	cancel context.CancelFunc
}

func (b *cancelBatch) Close() error {
	defer b.cancel()
	return b.BatchResults.Close()
}

// errRow is QueryRow over a bounded Query: Scan reads the first row and closes the rows.
type errRow struct {
	rows pgx.Rows
	err  error
}

func (r errRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
