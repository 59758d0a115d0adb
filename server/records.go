package server

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/scheduler/lifecycle"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// recorder writes what the workload lifecycle (scheduler/lifecycle) decides after each
// scheduling cycle to PostgreSQL as workload records and history rows, off the decision path:
// each cycle only merges what changed into a pending batch (quick, on the scheduler's
// goroutine); a writer goroutine sends batches to the store and keeps them when the database
// is down, to try again.
type recorder struct {
	st      *store.Store
	log     *slog.Logger
	outcome func(uid string) (finished, failed, known bool)
	// ended is when the cluster says a finished top owner ended (a Job's completion time);
	// zero, or nil: not known, and the workload is finished when its end is noticed.
	ended func(uid string) time.Time
	// ownerStopped says whether a top owner was suspended by its owner (not by Arbiter); nil:
	// never.
	ownerStopped func(uid string) bool
	// acting, if set, is asked before each write. While it says no the batch waits: a
	// renewal late by a moment (a busy machine) must not lose the records of what this
	// leader did; if the term ends instead, the recorder ends with it and its successor
	// records from the cluster and the database.
	acting func() bool
	// interval is the least time between two writes (0: DefaultRecordInterval); a failed
	// write is tried again after it too.
	interval time.Duration

	// lifecycle is what was last recorded of each unfinished workload, to send only changes.
	lifecycle *lifecycle.State

	mu        sync.Mutex
	pending   map[string]store.WorkloadRecord
	events    []store.WorkloadEvent
	finished  map[string]store.Finish
	stopped   map[string]bool // stopped by their owner since the last write
	estimates map[string]store.WorkloadEstimate
	wake      chan struct{}
	// observed is set once a cycle has been observed (under mu, with its change merged);
	// firstWritten is closed by the first write that follows it, or by the first flush that
	// finds it had nothing to write: what the term's first cycle saw is in the store by then
	// (recordFinishedAfterFirstCycle waits for it).
	observed     bool
	firstWritten chan struct{}
	firstOnce    sync.Once

	// sent is each waiting workload's start estimate as last queued to be written in this term
	// (estimates.go); a new term's recorder starts without, so it writes every estimate once.
	estMu sync.Mutex
	sent  map[string]scheduler.Estimate
}

func newRecorder(ctx context.Context, st *store.Store, log *slog.Logger) (*recorder, error) {
	r := &recorder{
		st: st, log: log, lifecycle: lifecycle.NewState(), pending: map[string]store.WorkloadRecord{},
		finished: map[string]store.Finish{}, stopped: map[string]bool{}, estimates: map[string]store.WorkloadEstimate{},
		wake: make(chan struct{}, 1), firstWritten: make(chan struct{}),
	}
	// Workloads recorded as unfinished before this start: if the cluster no longer shows
	// them after the first cycle, they ended while Arbiter was not running.
	known, err := st.UnfinishedWorkloads(ctx)
	if err != nil {
		return nil, err
	}
	for uid, phase := range known {
		r.lifecycle.Remember(uid, lifecycle.Recorded{Phase: scheduler.Phase(phase)})
	}
	return r, nil
}

// DefaultRecordInterval is the least time between two writes of the recorder: at most a few
// writes a second however fast cycles run.
const DefaultRecordInterval = 200 * time.Millisecond

// run writes batches until ctx ends; the owner flushes the last batch after the scheduler
// has stopped (see startScheduler). A change is written at once when the recorder is idle;
// what changes during the interval after a write waits for the next.
func (r *recorder) run(ctx context.Context) {
	interval := r.interval
	if interval <= 0 {
		interval = DefaultRecordInterval
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		if !r.flush(ctx) {
			continue // nothing was written: the next change goes at once
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// flush writes the pending batch, keeping it to try again if the store refuses it. It reports
// whether it sent anything (or found this replica not acting): then the next write waits out
// the interval.
func (r *recorder) flush(ctx context.Context) bool {
	if r.acting != nil && !r.acting() {
		r.mu.Lock()
		waiting := len(r.pending)+len(r.events)+len(r.finished)+len(r.stopped)+len(r.estimates) > 0
		r.mu.Unlock()
		if waiting {
			r.signal() // try again after run's pause
		}
		return true
	}
	r.mu.Lock()
	observed := r.observed
	records := make([]store.WorkloadRecord, 0, len(r.pending))
	for _, rec := range r.pending {
		records = append(records, rec)
	}
	events, finished, stopped := r.events, r.finished, r.stopped
	estimates := make([]store.WorkloadEstimate, 0, len(r.estimates))
	for _, e := range r.estimates {
		estimates = append(estimates, e)
	}
	r.pending, r.events, r.finished, r.stopped = map[string]store.WorkloadRecord{}, nil, map[string]store.Finish{}, map[string]bool{}
	r.estimates = map[string]store.WorkloadEstimate{}
	r.mu.Unlock()
	if len(records)+len(events)+len(finished)+len(stopped)+len(estimates) == 0 {
		r.written(observed)
		return false
	}
	err := r.st.RecordWorkloads(ctx, records, events)
	if err == nil {
		err = r.st.FinishWorkloads(ctx, finished)
		if err != nil {
			records, events = nil, nil
		}
	}
	// Stops are written after the records: a batch never holds a record newer than a stop of
	// the same workload (observe drops the stop when a record follows it).
	if err == nil && len(stopped) > 0 {
		if err = r.st.StopWorkloads(ctx, slices.Collect(maps.Keys(stopped))); err != nil {
			records, events, finished = nil, nil, nil
		}
	}
	// The estimates go last, after the records they belong to; each statement has the store's
	// deadline, and a batch holds only estimates that changed (shareEstimates).
	if err == nil && len(estimates) > 0 {
		if err = r.st.RecordEstimates(ctx, estimates); err != nil {
			records, events, finished, stopped = nil, nil, nil, nil
		}
	}
	if err == nil {
		r.written(observed)
	}
	if err != nil {
		r.log.Warn("workload records not written; will retry", "records", len(records), "events", len(events), "err", err)
		r.mu.Lock()
		for _, rec := range records {
			if _, newer := r.pending[rec.UID]; !newer {
				r.pending[rec.UID] = rec
			}
		}
		r.events = append(events, r.events...)
		for uid, f := range finished {
			r.finished[uid] = f
		}
		for uid := range stopped {
			if _, newer := r.pending[uid]; !newer {
				r.stopped[uid] = true
			}
		}
		for _, e := range estimates {
			if _, newer := r.estimates[e.UID]; !newer {
				r.estimates[e.UID] = e
			}
		}
		r.mu.Unlock()
		r.signal()
	}
	return true
}

// written closes firstWritten once a flush that followed an observed cycle has written
// everything it took (observed: a cycle had been observed when it took it).
func (r *recorder) written(observed bool) {
	if observed {
		r.firstOnce.Do(func() { close(r.firstWritten) })
	}
}

func (r *recorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// observe merges one cycle into the pending batch. It runs on the scheduler's goroutine; what
// to record is the lifecycle's decision.
func (r *recorder) observe(res *kube.Result) {
	ch := r.lifecycle.Observe(lifecycle.Cycle{
		At: res.At, Snapshot: &res.Snapshot, Plan: res.Plan, Rebuilt: slices.Collect(res.Rebuilt()),
		Owner: func(uid string) lifecycle.Owner {
			finished, failed, known := r.outcome(uid)
			return lifecycle.Owner{Known: known, Finished: finished, Failed: failed,
				Stopped: known && !finished && r.ownerStopped != nil && r.ownerStopped(uid)}
		},
	})
	r.take(ch)
}

// take merges one cycle's change into the pending batch and wakes the writer. A cycle that
// changes nothing still counts as observed: the first one's flush closes firstWritten.
func (r *recorder) take(ch lifecycle.Change) {
	if ch.Empty() {
		r.mu.Lock()
		first := !r.observed
		r.observed = true
		r.mu.Unlock()
		if first {
			r.signal() // a flush with nothing to write closes firstWritten
		}
		return
	}
	r.merge(ch)
	r.signal()
}

// merge adds one cycle's change to the pending batch.
func (r *recorder) merge(ch lifecycle.Change) {
	r.forgetEstimates(ch)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observed = true
	for _, rec := range ch.Records {
		r.pending[rec.UID] = storeRecord(rec)
		delete(r.stopped, rec.UID) // run again since: the record supersedes the stop
	}
	for _, ev := range ch.Events {
		se := store.WorkloadEvent{WorkloadUID: ev.Workload, At: ev.At, Kind: ev.Kind, Reason: ev.Reason, Message: ev.Message,
			PreemptorUID: ev.Preemptor}
		if ev.Borrowed != nil {
			b := int(*ev.Borrowed)
			se.Borrowed = &b
		}
		r.events = append(r.events, se)
	}
	for uid, phase := range ch.Finished {
		delete(r.pending, uid)
		at := time.Now()
		if r.ended != nil {
			if t := r.ended(uid); !t.IsZero() {
				at = t // it may have ended long before this replica noticed (a failover)
			}
		}
		r.finished[uid] = store.Finish{Phase: string(phase), At: at}
	}
	for _, uid := range ch.Stopped {
		r.stopped[uid] = true
	}
}

// projectID is a record's project id as the store keeps it: nil for a workload of no project
// (the scheduler found none for its namespace), which only those who read the whole system see.
func projectID(id string) *uuid.UUID {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil
	}
	return &u
}

func storeRecord(r lifecycle.Record) store.WorkloadRecord {
	return store.WorkloadRecord{
		UID: r.UID, Namespace: r.Namespace, Name: r.Name, Kind: r.Kind, APIGroup: r.APIGroup,
		TypeName: r.TypeName, CategoryName: r.CategoryName, ProjectID: projectID(r.ProjectID), ProjectName: r.ProjectName, DepartmentName: r.DepartmentName,
		PriorityName: r.PriorityName, PriorityValue: r.PriorityValue, Preemptibility: r.Preemptibility,
		PriorityFrom: r.PriorityFrom, PreemptibilityFrom: r.PreemptibilityFrom,
		Phase: string(r.Phase), Reason: r.Reason, Message: r.Message, QueuePosition: r.QueuePosition,
		Gang: r.Gang, RequestedGPUs: r.RequestedGPUs, AllocatedGPUs: r.AllocatedGPUs, NodePool: r.NodePool, Nodes: r.Nodes,
		QueuedAt: r.QueuedAt, StartedAt: r.StartedAt, Submitter: r.Submitter,
	}
}

// shareEstimates queues the start estimates of a pass that differ from those last queued in
// this term, and takes away those of workloads that no longer wait: the write stays the size
// of what changed, not of the queue. est is not changed afterwards (each pass makes a new map).
func (r *recorder) shareEstimates(est map[string]scheduler.Estimate) {
	r.estMu.Lock()
	var changed []store.WorkloadEstimate
	for uid, e := range est {
		if old, ok := r.sent[uid]; !ok || !old.At.Equal(e.At) || old.Basis != e.Basis {
			se := store.WorkloadEstimate{UID: uid, Basis: e.Basis}
			if !e.At.IsZero() {
				at := e.At
				se.At = &at
			}
			changed = append(changed, se)
		}
	}
	for uid := range r.sent {
		if _, ok := est[uid]; !ok {
			changed = append(changed, store.WorkloadEstimate{UID: uid})
		}
	}
	r.sent = est
	r.estMu.Unlock()
	if len(changed) == 0 {
		return
	}
	r.mu.Lock()
	for _, e := range changed {
		r.estimates[e.UID] = e
	}
	r.mu.Unlock()
	r.signal()
}

// forgetEstimates drops what was sent of the workloads whose record the store clears of its
// estimate (one that runs, finished or stopped by its owner: RecordWorkloads, FinishWorkloads,
// StopWorkloads), so that the estimate is written again once they wait again.
func (r *recorder) forgetEstimates(ch lifecycle.Change) {
	r.estMu.Lock()
	defer r.estMu.Unlock()
	if len(r.sent) == 0 {
		return
	}
	for _, rec := range ch.Records {
		if rec.Phase == scheduler.PhaseRunning {
			delete(r.sent, rec.UID)
		}
	}
	for uid := range ch.Finished {
		delete(r.sent, uid)
	}
	for _, uid := range ch.Stopped {
		delete(r.sent, uid)
	}
}
