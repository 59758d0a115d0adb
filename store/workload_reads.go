package store

import "context"

// The reads behind Run:ai's workload pods and history: a page's worth of a workload's events,
// and the records of the workloads whose pods the last cycle saw.

// FirstWorkloadEvents returns a workload's first n events, oldest first: what a page of its
// history needs, read no further.
func (s *Store) FirstWorkloadEvents(ctx context.Context, uid string, n int) ([]WorkloadEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT * FROM workload_events WHERE workload_uid = $1 ORDER BY id LIMIT $2`, uid, n)
	return scanAll[WorkloadEvent](rows, err)
}

// WorkloadRecordsOf returns the records of the workloads with these uids (those that have
// one), in no order.
func (s *Store) WorkloadRecordsOf(ctx context.Context, uids []string) ([]WorkloadRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+workloadColumns+` FROM workloads w WHERE w.uid = ANY($1)`, uids)
	return scanAll[WorkloadRecord](rows, err)
}
