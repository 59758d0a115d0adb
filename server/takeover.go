package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/english"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
)

// A leader binds pods first and records them a moment later: its workload records after the
// recorder's interval (records.go), its Scheduled events from a queue. One that dies or
// freezes in between leaves bound pods without their Scheduled event, and a workload that
// finishes before the next leader takes over without any record. So each term starts by
// reading the cluster (takeOver): it records what it finds finished and unrecorded, and writes
// the missing Scheduled events. The term's first cycle then records every live workload the
// records lack or hold out of date (the lifecycle, from the cluster's pods).
const (
	// takeoverDeadline bounds the whole reconciliation: past it the term starts scheduling
	// with what was done, and says what was not.
	takeoverDeadline = 30 * time.Second
	// missedPage is how many finished workloads one transaction checks and records.
	missedPage = 500
	// scheduledEventLookback is how far back a bound pod's Scheduled event is looked for: the
	// API server keeps events an hour by default (--event-ttl), so an older one is gone
	// whoever wrote it, and writing it again would only be noise.
	scheduledEventLookback = time.Hour
)

// takeOver reconciles, as this replica's term starts and before its first cycle, what the
// cluster shows that the records lack. may says whether this replica still holds the lease.
// It first waits for the scheduler's cache to hold the cluster (no cycle can run before that
// either), then works for at most takeoverDeadline, logging what it did and what failed; it
// never stops the term from starting. What it could not finish (a database that did not
// answer in time — a frozen predecessor may hold a workload's row locked — or an API server
// that did not) it tries again in the background until done or the term ends
// (keepTakingOver): the writes are idempotent, so a retry beside the term's cycles is safe.
//
// It returns the UIDs of the finished workloads its first read found (nil if the term ended
// first): the read after the term's first cycle skips them (recordFinishedAfterFirstCycle).
func takeOver(term context.Context, sched *kube.Scheduler, st *store.Store, may func() bool, log *slog.Logger) map[string]bool {
	if err := sched.WaitSynced(term); err != nil {
		return nil // the term (or the process) ended first
	}
	began := time.Now()
	var read map[string]bool
	reconcile := func(ctx context.Context) (recorded, events int, err error) {
		finished := sched.FinishedWorkloads()
		if read == nil {
			read = make(map[string]bool, len(finished))
			for _, w := range finished {
				read[w.UID] = true
			}
		}
		recorded, errFinished := recordFinished(ctx, finished, st, may)
		events, errEvents := sched.RestoreScheduledEvents(ctx, began.Add(-scheduledEventLookback), may)
		return recorded, events, errors.Join(errFinished, errEvents)
	}
	ctx, cancel := context.WithTimeout(term, takeoverDeadline)
	recorded, events, err := reconcile(ctx)
	cancel()
	log.Info("took over from the cluster", "finished_workloads_recorded", recorded,
		"scheduled_events_written", events, "took", time.Since(began).Round(time.Millisecond))
	if err != nil {
		log.Warn("taking over: not all done; trying again in the background", "retry_every", takeoverRetry, "err", err)
		go keepTakingOver(term, takeoverRetry, func(ctx context.Context) error {
			_, _, err := reconcile(ctx)
			return err
		}, may, log)
	}
	return read
}

// recordFinishedAfterFirstCycle closes the window between the takeover and the term's first
// cycle: a Job whose last pod ended after the takeover read the cluster and before that cycle
// was neither finished for the one nor running for the other, and its record, if the leader
// before never wrote one, was never written. Once what the first cycle saw is written
// (written closes), it reads the finished workloads again and records those still without a
// record, but for those the takeover read (taken: the takeover records them, or tries again
// until it has), so that a cluster's finished Jobs are not all sent twice a term; the store
// leaves recorded ones alone. What it cannot write in time it tries again, as the takeover does.
func recordFinishedAfterFirstCycle(term context.Context, written <-chan struct{}, finished func() []kube.FinishedWorkload,
	taken map[string]bool, st *store.Store, may func() bool, log *slog.Logger) {
	select {
	case <-term.Done():
		return
	case <-written:
	}
	attempt := func(ctx context.Context) error {
		since := slices.DeleteFunc(finished(), func(w kube.FinishedWorkload) bool { return taken[w.UID] })
		n, err := recordFinished(ctx, since, st, may)
		if n > 0 {
			log.Info("recorded workloads that finished between the takeover and the first cycle", "workloads", n)
		}
		return err
	}
	ctx, cancel := context.WithTimeout(term, takeoverDeadline)
	err := attempt(ctx)
	cancel()
	if err != nil {
		log.Warn("recording what finished before the first cycle: not all done; trying again in the background", "retry_every", takeoverRetry, "err", err)
		keepTakingOver(term, takeoverRetry, attempt, may, log)
	}
}

// takeoverRetry is how often a takeover that could not finish tries again.
const takeoverRetry = 10 * time.Second

// errNotLeading stops a takeover's writes when this replica's lease is not fresh.
var errNotLeading = errors.New("the lease is not fresh: this replica may not write")

// recordFinished records the finished workloads the records lack, a page per transaction,
// and returns how many it wrote.
func recordFinished(ctx context.Context, finished []kube.FinishedWorkload, st *store.Store, may func() bool) (int, error) {
	recorded := 0
	for start := 0; start < len(finished); start += missedPage {
		if !may() {
			return recorded, errNotLeading
		}
		page := finished[start:min(start+missedPage, len(finished))]
		missed := make([]store.MissedWorkload, len(page))
		for i, w := range page {
			missed[i] = missedWorkload(w)
		}
		n, err := st.RecordMissedWorkloads(ctx, missed)
		if err != nil {
			return recorded, fmt.Errorf("finished workloads %d to %d of %d not recorded: %w", start, start+len(page), len(finished), err)
		}
		recorded += n
	}
	return recorded, nil
}

// keepTakingOver tries attempt every `every`, each under takeoverDeadline, until it succeeds
// or the term ends; it waits while this replica's lease is not fresh.
func keepTakingOver(term context.Context, every time.Duration, attempt func(context.Context) error, may func() bool, log *slog.Logger) {
	for tries := 1; ; tries++ {
		select {
		case <-term.Done():
			return
		case <-time.After(every):
		}
		if !may() {
			continue
		}
		ctx, cancel := context.WithTimeout(term, takeoverDeadline)
		err := attempt(ctx)
		cancel()
		if err == nil {
			log.Info("took over from the cluster on a later attempt", "attempt", tries+1)
			return
		}
		log.Warn("taking over: still not all done; trying again", "attempt", tries+1, "retry_in", every, "err", err)
	}
}

// missedWorkload is the record of a finished workload, with the history the lifecycle would
// have written: queued when created, admitted when it started (if it did), and its end.
func missedWorkload(w kube.FinishedWorkload) store.MissedWorkload {
	phase := scheduler.PhaseCompleted
	if w.Failed {
		phase = scheduler.PhaseFailed
	}
	finished := w.FinishedAt
	r := store.WorkloadRecord{
		UID: w.UID, Namespace: w.Namespace, Name: w.Name, Kind: w.Kind, APIGroup: w.Group,
		TypeName: w.Type, CategoryName: w.Category, ProjectID: projectID(w.ProjectID), ProjectName: w.Project, DepartmentName: w.Department,
		Phase: string(phase), Gang: w.Gang, RequestedGPUs: w.RequestedGPUs, Nodes: w.Nodes,
		QueuedAt: w.QueuedAt, FinishedAt: &finished, Submitter: w.Submitter,
	}
	events := []store.WorkloadEvent{{WorkloadUID: w.UID, At: w.QueuedAt, Kind: "Queued",
		Message: "Queued in project " + orNone(w.Project) + "."}}
	if !w.StartedAt.IsZero() {
		started := w.StartedAt
		r.StartedAt = &started
		events = append(events, store.WorkloadEvent{WorkloadUID: w.UID, At: started, Kind: "Admitted",
			Message: "Admitted on [" + strings.Join(w.Nodes, " ") + "] with " + english.Plural(w.RequestedGPUs, "GPU") + "."})
	}
	events = append(events, store.WorkloadEvent{WorkloadUID: w.UID, At: finished, Kind: string(phase), Message: store.FinishMessage(string(phase))})
	return store.MissedWorkload{Record: r, Events: events}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
