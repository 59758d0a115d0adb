package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// WaitingSince returns, for each workload of uids whose record says it waits (WaitingSQL),
// when it began to wait: its last change of phase (an eviction's event, else its queue time).
// A new leader reads it for the workloads it finds waiting, to know how long they have
// waited (S19); one row per uid at most, so the read is as bounded as the list it is given.
func (s *Store) WaitingSince(ctx context.Context, uids []string) (map[string]time.Time, error) {
	out := make(map[string]time.Time, len(uids))
	if len(uids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT w.uid, `+phaseUpdatedAtSQL+` FROM workloads w WHERE w.uid = ANY($1) AND `+WaitingSQL, uids)
	if err != nil {
		return nil, classify(err)
	}
	_, err = scanWaitingSince(rows, out, len(uids))
	return out, err
}

// AllWaitingSince is WaitingSince for every workload whose record says it waits, read before
// a new leader knows which ones wait (beside the informers' first lists); at most limit of
// them: complete says whether that was all, and if not, WaitingSince is to be asked for the
// ones that matter.
func (s *Store) AllWaitingSince(ctx context.Context, limit int) (since map[string]time.Time, complete bool, err error) {
	rows, err := s.pool.Query(ctx, `SELECT w.uid, `+phaseUpdatedAtSQL+` FROM workloads w WHERE `+WaitingSQL+` LIMIT $1`, limit+1)
	if err != nil {
		return nil, false, classify(err)
	}
	since = map[string]time.Time{}
	n, err := scanWaitingSince(rows, since, limit)
	return since, err == nil && n <= limit, err
}

// scanWaitingSince reads (uid, since) rows into out, at most limit of them, and returns how
// many rows there were (up to limit + 1).
func scanWaitingSince(rows pgx.Rows, out map[string]time.Time, limit int) (int, error) {
	defer rows.Close()
	n := 0
	for rows.Next() {
		if n++; n > limit {
			break
		}
		var uid string
		var at time.Time
		if err := rows.Scan(&uid, &at); err != nil {
			return n, classify(err)
		}
		out[uid] = at
	}
	return n, classify(rows.Err())
}
