package store

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// AllAggregates is the aggregate the hooks hear when anything may have changed: the listener
// has just (re)established LISTEN, and whatever was announced while it was not listening is
// lost, so every cache must reload.
const AllAggregates = "*"

// ListenOptions tune FollowConfigChanges; zero values take the defaults.
type ListenOptions struct {
	// Retry is the first wait before reconnecting after the listening connection is lost;
	// it doubles on each failed attempt up to MaxRetry. Defaults 250 ms and 10 s.
	Retry, MaxRetry time.Duration
	// Timeout bounds acquiring the connection, LISTEN and each liveness check. Default 5 s.
	Timeout time.Duration
	// Check is how long to wait for a notification before checking that the connection is
	// still alive (a half-open connection never reports an error). Default 30 s.
	Check time.Duration
	Log   *slog.Logger
}

func (o ListenOptions) withDefaults() ListenOptions {
	if o.Retry <= 0 {
		o.Retry = 250 * time.Millisecond
	}
	if o.MaxRetry < o.Retry {
		o.MaxRetry = max(10*time.Second, o.Retry)
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Check <= 0 {
		o.Check = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return o
}

// FollowConfigChanges keeps this store in step with every replica's configuration changes
// until ctx ends: it LISTENs on ConfigChannel and passes each NOTIFY to ConfigChanged. Each
// time LISTEN is (re)established it calls ConfigChanged(AllAggregates), because notifications
// sent while it was not listening are lost. The returned channel is closed once the first
// LISTEN is in place: a caller that waits for it before its first load of the configuration
// cannot miss a change made in between.
//
// A lost connection is said once in the log (and its return once); attempts in between back
// off without a line each.
func (s *Store) FollowConfigChanges(ctx context.Context, o ListenOptions) <-chan struct{} {
	o = o.withDefaults()
	listening := make(chan struct{})
	go func() {
		first := true
		wait := o.Retry
		var lostAt time.Time
		for ctx.Err() == nil {
			err := s.listen(ctx, o, func() {
				wait = o.Retry
				if !lostAt.IsZero() {
					o.Log.Info("configuration notifications restored; reloading the configuration", "down", time.Since(lostAt).Round(time.Millisecond))
					lostAt = time.Time{}
				}
				s.ConfigChanged(AllAggregates)
				if first {
					first = false
					close(listening)
				}
			})
			if ctx.Err() != nil {
				return
			}
			if lostAt.IsZero() {
				lostAt = time.Now()
				o.Log.Warn("configuration notifications interrupted; retrying in the background (scheduling continues from the last good configuration)", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
			wait = min(2*wait, o.MaxRetry)
		}
	}()
	return listening
}

// listen holds one connection in LISTEN and hands notifications to ConfigChanged until the
// connection fails or ctx ends. listening is called once LISTEN is in place.
func (s *Store) listen(ctx context.Context, o ListenOptions, listening func()) error {
	conn, err := acquireWithin(ctx, s.pool, o.Timeout)
	if err != nil {
		return err
	}
	// The connection goes back to the pool only after UNLISTEN succeeds; otherwise it is
	// closed, so no pooled connection keeps listening.
	clean := false
	defer func() {
		if !clean {
			_ = conn.Conn().Close(context.Background())
		}
		conn.Release()
	}()
	if err := execWithin(ctx, conn, o.Timeout, "LISTEN "+ConfigChannel); err != nil {
		return err
	}
	listening()
	for {
		waitCtx, cancel := context.WithTimeout(ctx, o.Check)
		n, err := conn.Conn().WaitForNotification(waitCtx)
		cancel()
		switch {
		case err == nil:
			s.ConfigChanged(n.Payload)
		case ctx.Err() != nil:
			if execWithin(context.Background(), conn, o.Timeout, "UNLISTEN "+ConfigChannel) == nil {
				clean = true
			}
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			// Nothing heard for a while: make sure the connection is still there.
			if err := execWithin(ctx, conn, o.Timeout, "SELECT 1"); err != nil {
				return err
			}
		default:
			return classify(err)
		}
	}
}

func acquireWithin(ctx context.Context, pool *pgxpool.Pool, d time.Duration) (*pgxpool.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, classify(err)
	}
	return conn, nil
}

func execWithin(ctx context.Context, conn *pgxpool.Conn, d time.Duration, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	_, err := conn.Exec(ctx, sql)
	return classify(err)
}
