package store

import (
	"context"
	"time"
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
	defer rows.Close()
	for rows.Next() {
		var uid string
		var at time.Time
		if err := rows.Scan(&uid, &at); err != nil {
			return nil, classify(err)
		}
		out[uid] = at
	}
	return out, classify(rows.Err())
}
