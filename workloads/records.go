package workloads

import (
	"context"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
)

// This file reads workload records for a caller: lists, a walk by key, events and counts, all
// over what the caller may see (Scope).

// List is a page of the workload records the caller may see, with the offset of the next.
func (s *Service) List(ctx context.Context, who auth.Identity, q listquery.Query, includeFinished bool) ([]store.WorkloadRecord, *int, error) {
	if s.records == nil {
		return nil, nil, ErrNoRecords
	}
	scope, err := s.Scope(ctx, who)
	if err != nil {
		return nil, nil, err
	}
	return s.ListIn(ctx, scope, q, includeFinished)
}

// Count counts the workload records the caller may see that q's filters and search match,
// all pages of List: the same scope, the same query.
func (s *Service) Count(ctx context.Context, who auth.Identity, q listquery.Query, includeFinished bool) (int, error) {
	if s.records == nil {
		return 0, ErrNoRecords
	}
	scope, err := s.Scope(ctx, who)
	if err != nil {
		return 0, err
	}
	return s.records.CountVisibleWorkloads(ctx, q, includeFinished, scope)
}

// Walk reads the records scope may see by key, limit at a time from after (nil: the first),
// for an export that reads them all; scope is the caller's (Scope), read once for the walk.
func (s *Service) Walk(ctx context.Context, scope store.WorkloadScope, q listquery.Query, includeFinished bool, after *store.WorkloadCursor, limit int) ([]store.WorkloadRecord, *store.WorkloadCursor, error) {
	if s.records == nil {
		return nil, nil, ErrNoRecords
	}
	return s.records.VisibleWorkloadsAfter(ctx, q, includeFinished, scope, after, limit)
}

// Events are a visible workload's events, oldest first.
func (s *Service) Events(ctx context.Context, w Visible) ([]store.WorkloadEvent, error) {
	return s.records.WorkloadEvents(ctx, w.Record.UID)
}

// Counts counts the records the caller may see: by phase, pending ones by reason, and
// preemptions and reclaims since a time (the Overview's tiles).
func (s *Service) Counts(ctx context.Context, who auth.Identity, since time.Time) (store.WorkloadCounts, error) {
	if s.records == nil {
		return store.WorkloadCounts{}, ErrNoRecords
	}
	scope, err := s.Scope(ctx, who)
	if err != nil {
		return store.WorkloadCounts{}, err
	}
	return s.records.CountWorkloads(ctx, scope, since)
}

// Glimpse is another workload's record as a page about one workload names it (the one that
// preempted it, those a dry run named): readable says whether the caller may open it; one
// they may not is named only by its project. Its events come only when readable.
func (s *Service) Glimpse(ctx context.Context, who auth.Identity, uid string, withEvents bool) (r store.WorkloadRecord, readable bool, evs []store.WorkloadEvent, err error) {
	if s.records == nil {
		return r, false, nil, ErrNoRecords
	}
	if r, err = s.records.WorkloadRecord(ctx, uid); err != nil {
		return r, false, nil, err
	}
	scope, _, err := s.ProjectOf(ctx, r)
	if err != nil || !auth.Allowed(who, auth.Read, scope) {
		return r, false, nil, nil
	}
	if withEvents {
		evs, _ = s.records.WorkloadEvents(ctx, uid)
	}
	return r, true, evs, nil
}

// ProjectRefs are the projects by id and name, for pickers and filters.
func (s *Service) ProjectRefs(ctx context.Context) ([]store.ProjectRef, error) {
	if s.records == nil {
		return nil, ErrNoRecords
	}
	return s.records.ProjectRefs(ctx)
}

// ListIn is List over a scope the caller already has (Scope): a page that also names the
// scope's projects reads it once.
func (s *Service) ListIn(ctx context.Context, scope store.WorkloadScope, q listquery.Query, includeFinished bool) ([]store.WorkloadRecord, *int, error) {
	if s.records == nil {
		return nil, nil, ErrNoRecords
	}
	return s.records.VisibleWorkloads(ctx, q, includeFinished, scope)
}
