package server

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
)

// recorder turns scheduling cycles into workload records and history rows in PostgreSQL,
// off the decision path: each cycle only merges what changed into a pending batch (quick, on
// the scheduler's goroutine); a writer goroutine sends batches to the store and keeps them
// when the database is down, to try again.
type recorder struct {
	st      *store.Store
	log     *slog.Logger
	outcome func(uid string) (finished, failed, known bool)

	// last is what was last recorded of each unfinished workload, to send only changes.
	last map[string]recordState

	mu       sync.Mutex
	pending  map[string]store.WorkloadRecord
	events   []store.WorkloadEvent
	finished map[string]string // uid → final phase
	wake     chan struct{}
}

type recordState struct {
	// evicted is set from an eviction until the workload is admitted again: meanwhile it is
	// Preempted, waiting to come back (S24), whatever its terminating pods still hold.
	evicted                          bool
	phase, reason, message, priority string
	position, allocated, requested   int
	nodePool                         string
	preemptible                      string
}

func newRecorder(ctx context.Context, st *store.Store, log *slog.Logger) (*recorder, error) {
	r := &recorder{
		st: st, log: log, last: map[string]recordState{}, pending: map[string]store.WorkloadRecord{},
		finished: map[string]string{}, wake: make(chan struct{}, 1),
	}
	// Workloads recorded as unfinished before this start: if the cluster no longer shows
	// them after the first cycle, they ended while Arbiter was not running.
	known, err := st.UnfinishedWorkloads(ctx)
	if err != nil {
		return nil, err
	}
	for uid, phase := range known {
		r.last[uid] = recordState{phase: phase}
	}
	return r, nil
}

// run writes batches until ctx ends; the owner flushes the last batch after the scheduler
// has stopped (see startScheduler).
func (r *recorder) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		r.flush(ctx)
		// Coalesce: at most a few writes a second however fast cycles run.
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (r *recorder) flush(ctx context.Context) {
	r.mu.Lock()
	records := make([]store.WorkloadRecord, 0, len(r.pending))
	for _, rec := range r.pending {
		records = append(records, rec)
	}
	events, finished := r.events, r.finished
	r.pending, r.events, r.finished = map[string]store.WorkloadRecord{}, nil, map[string]string{}
	r.mu.Unlock()
	if len(records)+len(events)+len(finished) == 0 {
		return
	}
	err := r.st.RecordWorkloads(ctx, records, events)
	if err == nil {
		err = r.st.FinishWorkloads(ctx, finished, time.Now())
		if err != nil {
			records, events = nil, nil
		}
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
		for uid, phase := range finished {
			r.finished[uid] = phase
		}
		r.mu.Unlock()
		r.signal()
	}
}

func (r *recorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// observe merges one cycle into the pending batch. It runs on the scheduler's goroutine, so
// it looks only at the workloads that can have changed: those rebuilt for this cycle (new ones
// among them) and those the plan binds, evicts, resumes or keeps waiting. Any other is as
// recorded.
func (r *recorder) observe(res *kube.Result) {
	snap, plan := &res.Snapshot, res.Plan
	now := res.At
	typeCategory := make(map[string]string, len(snap.WorkloadTypes))
	for _, t := range snap.WorkloadTypes {
		typeCategory[t.Name] = t.Category
	}
	department := make(map[string]string, len(snap.Projects))
	for _, p := range snap.Projects {
		department[p.Name] = p.Department
	}
	// The workloads to look at: those rebuilt for this cycle and those the plan names. One the
	// recorder has not seen is always among them: a workload is built afresh whenever it
	// appears in the cache.
	look := map[string]bool{}
	for uid := range res.Rebuilt() {
		look[uid] = true
	}
	pending := make(map[string]*scheduler.PendingWorkload, len(plan.Pending))
	for i := range plan.Pending {
		pending[plan.Pending[i].Workload] = &plan.Pending[i]
		look[plan.Pending[i].Workload] = true
	}
	evicted := make(map[string]*scheduler.Eviction, len(plan.Evictions))
	for i := range plan.Evictions {
		evicted[plan.Evictions[i].Workload] = &plan.Evictions[i]
		look[plan.Evictions[i].Workload] = true
	}
	resumed := make(map[string]bool, len(plan.Resumes))
	for _, rs := range plan.Resumes {
		resumed[rs.Workload] = true
		look[rs.Workload] = true
	}
	nodesOf := make(map[string][]string)
	for _, b := range plan.Binds {
		nodesOf[b.Workload] = appendUnique(nodesOf[b.Workload], b.Node)
		look[b.Workload] = true
	}
	running := make(map[string]*scheduler.RunningWorkload)
	for i := range plan.Running {
		if uid := plan.Running[i].Workload; look[uid] {
			running[uid] = &plan.Running[i]
		}
	}

	var events []store.WorkloadEvent
	records := make([]store.WorkloadRecord, 0, len(look))
	for _, uid := range slices.Sorted(maps.Keys(look)) {
		w, _ := res.Workload(uid)
		if w == nil {
			continue // gone: see below
		}
		rec := store.WorkloadRecord{
			UID: w.UID, Namespace: w.Namespace, Name: w.Name, Kind: w.Kind, APIGroup: w.Group, TypeName: w.Type,
			CategoryName: typeCategory[w.Type], ProjectName: w.Project, DepartmentName: department[w.Project],
			QueuedAt: w.QueuedAt, Phase: string(w.Phase), Gang: len(w.Pods),
		}
		for _, p := range w.Pods {
			rec.RequestedGPUs += int(p.Requests.GPUs)
			if p.NodeName != "" {
				rec.AllocatedGPUs += int(p.Requests.GPUs)
				rec.Nodes = appendUnique(rec.Nodes, p.NodeName)
			}
		}
		for _, n := range nodesOf[w.UID] {
			rec.Nodes = appendUnique(rec.Nodes, n)
		}
		if !w.StartedAt.IsZero() {
			started := w.StartedAt
			rec.StartedAt = &started
		}
		prev, known := r.last[w.UID]
		switch {
		case evicted[w.UID] != nil:
			ev := evicted[w.UID]
			rec.Phase = string(scheduler.PhasePreempted)
			kind := "Preempted"
			if ev.Rule == scheduler.RuleReclaim {
				kind = "Reclaimed"
			}
			preemptor := ev.Preemptor
			if p, _ := res.Workload(ev.Preemptor); p != nil {
				preemptor = p.Namespace + "/" + p.Name
			}
			msg := fmt.Sprintf("Evicted for %s under %s; %d GPUs freed (exit code 3006).", preemptor, ev.Rule, ev.GPUs)
			if ev.Mode == scheduler.Suspend {
				msg = fmt.Sprintf("Suspended for %s under %s; %d GPUs freed. It keeps its place in the queue.", preemptor, ev.Rule, ev.GPUs)
			}
			events = append(events, store.WorkloadEvent{WorkloadUID: w.UID, At: now, Kind: kind, Reason: string(ev.Rule), Message: msg})
		case running[w.UID] != nil:
			rw := running[w.UID]
			rec.Phase = string(scheduler.PhaseRunning)
			rec.PriorityName, rec.PriorityValue, rec.Preemptibility = rw.Priority.Name, int(rw.Priority.Value), string(rw.Preemptibility)
			rec.NodePool, rec.AllocatedGPUs = rw.NodePool, int(rw.GPUs)
		case pending[w.UID] != nil:
			pw := pending[w.UID]
			rec.PriorityName, rec.PriorityValue, rec.Preemptibility = pw.Priority.Name, int(pw.Priority.Value), string(pw.Preemptibility)
			rec.Reason, rec.Message, rec.QueuePosition = string(pw.Reason), pw.Message, pw.QueuePosition
			if w.Phase == scheduler.PhaseRunning {
				rec.Phase = string(scheduler.PhasePending) // a gang partly bound still waits
			}
		}
		evictedNow := evicted[w.UID] != nil || (prev.evicted && len(nodesOf[w.UID]) == 0 && !resumed[w.UID])
		if evictedNow && evicted[w.UID] == nil && w.Phase != scheduler.PhaseSuspended {
			rec.Phase = string(scheduler.PhasePreempted) // evicted, waiting to come back
		}
		if resumed[w.UID] {
			rec.Phase = string(scheduler.PhasePending)
			events = append(events, store.WorkloadEvent{WorkloadUID: w.UID, At: now, Kind: "Resumed", Message: "Resumed: admitted again."})
		}
		if len(nodesOf[w.UID]) > 0 && (!known || prev.phase != string(scheduler.PhaseRunning)) {
			rec.Phase = string(scheduler.PhaseRunning)
			rec.Reason, rec.Message, rec.QueuePosition = "", "", 0
			started := now
			rec.StartedAt = &started
		}
		if !known {
			events = append(events, store.WorkloadEvent{WorkloadUID: w.UID, At: w.QueuedAt, Kind: "Queued",
				Message: fmt.Sprintf("Queued in project %s at priority %s.", orNone(w.Project), orNone(rec.PriorityName))})
			if rec.Phase == string(scheduler.PhaseSuspended) {
				events = append(events, store.WorkloadEvent{WorkloadUID: w.UID, At: now, Kind: "Suspended", Message: "Suspended by Arbiter."})
			}
		}
		if rec.Phase == string(scheduler.PhaseRunning) && (!known || prev.phase != string(scheduler.PhaseRunning)) {
			events = append(events, store.WorkloadEvent{WorkloadUID: w.UID, At: now, Kind: "Admitted",
				Message: fmt.Sprintf("Admitted on %v in node pool %s with %d GPUs.", rec.Nodes, orNone(rec.NodePool), rec.RequestedGPUs)})
		}
		if known && prev.priority != "" && rec.PriorityName != "" && prev.priority != rec.PriorityName {
			events = append(events, store.WorkloadEvent{WorkloadUID: w.UID, At: now, Kind: "PriorityChanged",
				Message: fmt.Sprintf("Priority changed from %s to %s.", prev.priority, rec.PriorityName)})
		}
		state := recordState{evicted: evictedNow, phase: rec.Phase, reason: rec.Reason, message: rec.Message, priority: rec.PriorityName,
			position: rec.QueuePosition, allocated: rec.AllocatedGPUs, requested: rec.RequestedGPUs, nodePool: rec.NodePool,
			preemptible: rec.Preemptibility}
		if rec.PriorityName == "" && known {
			state.priority = prev.priority
		}
		if !known || state != prev || len(nodesOf[w.UID]) > 0 {
			r.last[w.UID] = state
			records = append(records, rec)
		}
	}
	finished := map[string]string{}
	for uid, prev := range r.last {
		// Every workload of the snapshot is in last by now: only when last holds more has any
		// left the cluster's active set.
		if len(r.last) == len(snap.Workloads) {
			break
		}
		if w, _ := res.Workload(uid); w != nil {
			continue
		}
		// A workload whose top owner still exists and has not finished is between pods (a
		// Job recreating evicted pods, a Deployment scaled to zero): it has not ended. A workload
		// evicted with no controller left to bring it back (a bare pod) ends as Preempted
		// (S20); a Job that failed ends as Failed; everything else completed.
		done, failed, ownerKnown := r.outcome(uid)
		if ownerKnown && !done {
			continue
		}
		phase := string(scheduler.PhaseCompleted)
		switch {
		case ownerKnown && done && failed:
			phase = string(scheduler.PhaseFailed)
		case !ownerKnown && prev.phase == string(scheduler.PhasePreempted):
			phase = string(scheduler.PhasePreempted)
		}
		finished[uid] = phase
		delete(r.last, uid)
	}

	if len(records)+len(events)+len(finished) == 0 {
		return
	}
	r.mu.Lock()
	for _, rec := range records {
		r.pending[rec.UID] = rec
	}
	r.events = append(r.events, events...)
	for uid, phase := range finished {
		delete(r.pending, uid)
		r.finished[uid] = phase
	}
	r.mu.Unlock()
	r.signal()
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
