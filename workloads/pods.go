package workloads

import (
	"context"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
)

// FirstEvents are a visible workload's first n events, oldest first (a page of its history).
func (s *Service) FirstEvents(ctx context.Context, w Visible, n int) ([]store.WorkloadEvent, error) {
	return s.records.FirstWorkloadEvents(ctx, w.Record.UID, n)
}

// VisibleRecords are the records, by uid, of those of the workloads uids the caller may see, by
// the lists' rule (Scope): a workload of a project they may read, or any to those who may read
// the whole system. A workload with no record yet is in no project: all says whether the
// caller sees those too.
func (s *Service) VisibleRecords(ctx context.Context, who auth.Identity, uids []string) (records map[string]store.WorkloadRecord, all bool, err error) {
	if s.records == nil {
		return nil, false, ErrNoRecords
	}
	scope, err := s.Scope(ctx, who)
	if err != nil {
		return nil, false, err
	}
	list, err := s.records.WorkloadRecordsOf(ctx, uids)
	if err != nil {
		return nil, false, err
	}
	records = make(map[string]store.WorkloadRecord, len(list))
	for _, r := range list {
		if scope.Includes(r.ProjectID) {
			records[r.UID] = r
		}
	}
	return records, scope.All, nil
}
