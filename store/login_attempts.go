package store

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// ReserveLoginAttempt decides, in one transaction holding the rows of keys locked, whether a
// sign-in attempt may go on to the password check: if any key is blocked it returns how long
// to wait and counts nothing; otherwise it counts the attempt as a failure for every key now,
// before the password is checked, and blocks each key for delay(failures). A successful
// sign-in then clears the keys (ClearLoginFailures), and an attempt that was never checked
// gives its reservation back (ReleaseLoginAttempt). So parallel attempts are counted one
// after another, and no more of them reach the password check than delay lets through.
// Counts older than an hour start again.
func (s *Store) ReserveLoginAttempt(ctx context.Context, keys []string, delay func(failures int) time.Duration) (wait time.Duration, err error) {
	keys = sortedKeys(keys) // the same lock order in every transaction: no deadlocks
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		wait = 0
		failures := make([]int, len(keys))
		for i, k := range keys {
			var stale bool
			var secs float64
			// ON CONFLICT DO UPDATE locks the row (and reads its newest version) until commit.
			if err := tx.QueryRow(ctx, `
				INSERT INTO login_failures (key, failures, last_failed, blocked_until)
				VALUES ($1, 0, clock_timestamp(), clock_timestamp())
				ON CONFLICT (key) DO UPDATE SET failures = login_failures.failures
				RETURNING failures, last_failed < clock_timestamp() - interval '1 hour',
					greatest(extract(epoch FROM blocked_until - clock_timestamp()), 0)::float8`, k).Scan(&failures[i], &stale, &secs); err != nil {
				return err
			}
			if stale {
				failures[i] = 0
			}
			wait = max(wait, time.Duration(secs*float64(time.Second)))
		}
		if wait > 0 {
			return nil
		}
		for i, k := range keys {
			n := failures[i] + 1
			if _, err := tx.Exec(ctx, `
				UPDATE login_failures SET failures = $2, last_failed = clock_timestamp(),
					blocked_until = clock_timestamp() + make_interval(secs => $3) WHERE key = $1`,
				k, n, delay(n).Seconds()); err != nil {
				return err
			}
		}
		return nil
	})
	return wait, err
}

// ReleaseLoginAttempt gives back an attempt that ReserveLoginAttempt counted but whose
// password was never checked (the server was too busy): one failure less for each key, and
// the block shortened to what the remaining failures call for.
func (s *Store) ReleaseLoginAttempt(ctx context.Context, keys []string, delay func(failures int) time.Duration) error {
	return s.InTx(ctx, func(tx pgx.Tx) error {
		for _, k := range sortedKeys(keys) {
			var n int
			err := tx.QueryRow(ctx, `UPDATE login_failures SET failures = greatest(failures - 1, 0) WHERE key = $1 RETURNING failures`, k).Scan(&n)
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE login_failures SET blocked_until = least(blocked_until, last_failed + make_interval(secs => $2)) WHERE key = $1`,
				k, delay(n).Seconds()); err != nil {
				return err
			}
		}
		return nil
	})
}

// ClearLoginFailures forgets failed logins for keys after a successful one.
func (s *Store) ClearLoginFailures(ctx context.Context, keys []string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM login_failures WHERE key = ANY($1)`, keys)
	return classify(err)
}

func sortedKeys(keys []string) []string {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// ServerKey returns the secret called name that every replica shares, made of 32 random bytes
// by whichever replica asks first.
func (s *Store) ServerKey(ctx context.Context, name string) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO server_keys (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, fresh); err != nil {
		return nil, classify(err)
	}
	var key []byte
	err := s.pool.QueryRow(ctx, `SELECT secret FROM server_keys WHERE name = $1`, name).Scan(&key)
	return key, classify(err)
}
