package store

import (
	"context"
	"time"
)

// RuntimeMedian is the median runtime of one type's workloads in one project that completed
// in a window, and how many there were.
type RuntimeMedian struct {
	Project string
	Type    string
	Median  time.Duration
	Count   int
}

// maxRuntimeGroups bounds the answer of MedianRuntimes (projects x types).
const maxRuntimeGroups = 10000

// MedianRuntimes returns, for each project and workload type, the median runtime (start to
// finish) of the workloads that completed since since: one query, for a whole estimate pass.
// Failed and preempted workloads are left out: how long they ran says little of how long the
// next one will.
func (s *Store) MedianRuntimes(ctx context.Context, since time.Time) ([]RuntimeMedian, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT project_name, type_name,
		       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at)),
		       count(*)
		FROM workloads
		WHERE phase = 'Completed' AND finished_at >= $1 AND started_at IS NOT NULL AND finished_at > started_at
		      AND project_name <> ''
		GROUP BY project_name, type_name
		ORDER BY project_name, type_name
		LIMIT $2`, since, maxRuntimeGroups)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []RuntimeMedian
	for rows.Next() {
		var m RuntimeMedian
		var secs float64
		if err := rows.Scan(&m.Project, &m.Type, &secs, &m.Count); err != nil {
			return nil, classify(err)
		}
		m.Median = time.Duration(secs * float64(time.Second))
		out = append(out, m)
	}
	return out, classify(rows.Err())
}
