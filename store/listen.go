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
// connection fails or ctx ends. listening is called once LISTEN is in place. Acquiring the
// connection, LISTEN and the liveness checks are bounded like every store call; waiting for a
// notification is not (silence is normal).
func (s *Store) listen(ctx context.Context, o ListenOptions, listening func()) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return classify(err)
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
	if err := s.execOn(ctx, conn, "LISTEN "+ConfigChannel); err != nil {
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
			if s.execOn(context.Background(), conn, "UNLISTEN "+ConfigChannel) == nil {
				clean = true
			}
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			// Nothing heard for a while: make sure the connection is still there.
			if err := s.execOn(ctx, conn, "SELECT 1"); err != nil {
				return err
			}
		default:
			return classify(err)
		}
	}
}

// execOn runs sql on conn under the store's deadline.
func (s *Store) execOn(ctx context.Context, conn *pgxpool.Conn, sql string) error {
	ctx, cancel := s.pool.bound(ctx)
	defer cancel()
	_, err := conn.Exec(ctx, sql)
	return classify(err)
}
