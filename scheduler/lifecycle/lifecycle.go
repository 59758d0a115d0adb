// Package lifecycle decides what Arbiter records of each workload after a scheduling cycle:
// its phase (S24: Pending, Running, Suspended, Preempted, Completed, Failed), the figures the
// console lists, and the entries of its history (Queued, Admitted, Preempted or Reclaimed,
// Suspended, Resumed, PriorityChanged). It is pure: it reads a cycle's snapshot and plan and
// what was recorded before, and says what to record now; server writes it to the store.
package lifecycle

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/english"
	"github.com/arbiterhq/arbiter/scheduler"
)

// Record is what is recorded of one workload: the workload list's row.
type Record struct {
	UID, Namespace, Name, Kind, APIGroup string
	TypeName, CategoryName               string
	ProjectID                            string // the project's id; empty for no project
	ProjectName, DepartmentName          string
	PriorityName                         string
	PriorityValue                        int
	Preemptibility                       string
	// PriorityFrom and PreemptibilityFrom say where each came from, for a person (S7, S8).
	PriorityFrom, PreemptibilityFrom string
	Phase                            scheduler.Phase
	Reason, Message                  string // why it waits (S23)
	QueuePosition                    int
	Gang                             int // its pods
	RequestedGPUs, AllocatedGPUs     int
	NodePool                         string
	Nodes                            []string
	QueuedAt                         time.Time
	StartedAt                        *time.Time
	Submitter                        string // the top owner's scheduler.AnnotationSubmitter
}

// Event is one entry of a workload's history.
type Event struct {
	Workload string // UID
	At       time.Time
	Kind     string // Queued, Admitted, Preempted, Reclaimed, Suspended, Resumed, PriorityChanged
	Reason   string // the rule of an eviction
	Message  string
	// Preemptor is the UID of the workload an eviction made room for; Borrowed, for a reclaim
	// (S17), is how many GPUs the victim's project used beyond its deserved quota just before
	// this cycle's reclaims (nil when not known).
	Preemptor string
	Borrowed  *int64
}

// Recorded is what was last recorded of an unfinished workload, to record only changes.
type Recorded struct {
	// Evicted is set from an eviction until the workload is admitted again: meanwhile it is
	// Preempted, waiting to come back (S24), whatever its terminating pods still hold.
	Evicted                        bool
	Phase                          scheduler.Phase
	Reason, Message, Priority      string
	PriorityValue                  int
	Position, Allocated, Requested int
	NodePool, Preemptibility       string
	// PriorityFrom, PreemptibilityFrom and Alias are where the values came from, kept as the
	// plan gives them: the sentences are made only for a record that is written.
	PriorityFrom, PreemptibilityFrom scheduler.From
	Alias                            string
}

// State is what was last recorded of each unfinished workload. Observe keeps it.
type State struct {
	// recorded is by UID.
	recorded map[string]Recorded
	// absent are the recorded workloads the last snapshot observed did not have: between pods
	// (a Job whose evicted pod its controller has yet to make again) or remembered from before
	// this start and not seen since. Each cycle finish looks at these and at the workloads gone
	// in it, not at every record: at thousands of workloads that pass, a binary search of the
	// snapshot for each record, was most of the lifecycle's time in every cycle.
	absent map[string]struct{}
}

// NewState is a state with nothing recorded.
func NewState() *State {
	return &State{recorded: map[string]Recorded{}, absent: map[string]struct{}{}}
}

// Remember adds what a record made before this start says of an unfinished workload. Until a
// snapshot shows it, it is absent: if the cluster no longer has it, it ended meanwhile.
func (s *State) Remember(uid string, r Recorded) {
	s.recorded[uid] = r
	s.absent[uid] = struct{}{}
}

// Owner is how a workload's top owner stands once the workload has left the cluster's
// active set (no pods, or none Arbiter schedules).
type Owner struct {
	Known    bool // the cluster still has the owner
	Finished bool // it completed or failed (a Job's Complete or Failed condition)
	Failed   bool
	// Stopped: its owner suspended it (a Job's spec.suspend set by a person, Run:ai's STOP),
	// not Arbiter; it waits, Suspended, until run again.
	Stopped bool
}

// Cycle is one scheduling cycle, as the lifecycle reads it.
type Cycle struct {
	At       time.Time
	Snapshot *scheduler.Snapshot // its workloads sorted by UID, as the Kubernetes cache makes them
	Plan     *scheduler.Plan
	// Rebuilt are the workloads built afresh for this cycle (new or changed); any other
	// workload the plan does not name is as last recorded.
	Rebuilt []string
	// Owner tells how the owner of a workload that left the snapshot stands; asked only
	// about those.
	Owner func(uid string) Owner
}

// Change is what to record after a cycle.
type Change struct {
	Records  []Record // by UID
	Events   []Event
	Finished map[string]scheduler.Phase // workloads that ended: Completed, Failed or Preempted
	// Stopped are workloads whose owner stopped them since the last record: their pods are
	// gone, and they are Suspended until run again (their records keep everything else).
	Stopped []string
}

// Empty reports whether there is nothing to record.
func (c *Change) Empty() bool {
	return len(c.Records)+len(c.Events)+len(c.Finished)+len(c.Stopped) == 0
}

// Observe decides what to record after cycle c and updates s to match. It looks only at the
// workloads that can have changed: those rebuilt for the cycle (new ones among them) and
// those the plan binds, evicts, resumes or keeps waiting.
func (s *State) Observe(c Cycle) Change {
	snap, plan, now := c.Snapshot, c.Plan, c.At
	workload := func(uid string) *scheduler.Workload {
		ws := snap.Workloads
		i := sort.Search(len(ws), func(i int) bool { return ws[i].UID >= uid })
		if i == len(ws) || ws[i].UID != uid {
			return nil
		}
		return &ws[i]
	}
	typeCategory := make(map[string]string, len(snap.WorkloadTypes))
	for _, t := range snap.WorkloadTypes {
		typeCategory[t.Name] = t.Category
	}
	department := make(map[string]string, len(snap.Projects))
	projectID := make(map[string]string, len(snap.Projects))
	for _, p := range snap.Projects {
		department[p.Name] = p.Department
		projectID[p.Name] = p.ID
	}
	// One not recorded before is always among those rebuilt: a workload is built afresh
	// whenever it appears in the cache.
	look := map[string]bool{}
	for _, uid := range c.Rebuilt {
		look[uid] = true
	}
	pending := make(map[string]*scheduler.PendingWorkload, len(plan.Pending))
	for i := range plan.Pending {
		pending[plan.Pending[i].Workload] = &plan.Pending[i]
		look[plan.Pending[i].Workload] = true
	}
	evicted := make(map[string]*scheduler.Eviction, len(plan.Evictions))
	// replicas beyond a semi-preemptible workload's minimum, evicted while it keeps running (S26)
	shed := map[string][]*scheduler.Eviction{}
	for i := range plan.Evictions {
		e := &plan.Evictions[i]
		look[e.Workload] = true
		if len(e.Pods) > 0 {
			shed[e.Workload] = append(shed[e.Workload], e)
			continue
		}
		evicted[e.Workload] = e
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

	var ch Change
	for _, uid := range slices.Sorted(maps.Keys(look)) {
		w := workload(uid)
		if w == nil {
			continue // gone: see below
		}
		rec := Record{
			UID: w.UID, Namespace: w.Namespace, Name: w.Name, Kind: w.Kind, APIGroup: w.Group, TypeName: w.Type,
			CategoryName: typeCategory[w.Type], ProjectID: projectID[w.Project], ProjectName: w.Project, DepartmentName: department[w.Project],
			QueuedAt: w.QueuedAt, Phase: w.Phase, Gang: len(w.Pods), Submitter: w.Annotations[scheduler.AnnotationSubmitter],
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
		event := func(kind, reason, message string) {
			ch.Events = append(ch.Events, Event{Workload: w.UID, At: now, Kind: kind, Reason: reason, Message: message})
		}
		// evictionEvent tells an eviction: Preempted or Reclaimed, naming the preemptor, and for
		// a reclaim what the project borrowed just before.
		evictionEvent := func(ev *scheduler.Eviction) {
			kind := "Preempted"
			if ev.Rule == scheduler.RuleReclaim {
				kind = "Reclaimed"
			}
			preemptor := ev.Preemptor
			if p := workload(ev.Preemptor); p != nil {
				preemptor = p.Namespace + "/" + p.Name
			}
			event(kind, string(ev.Rule), ev.Sentence(preemptor))
			last := &ch.Events[len(ch.Events)-1]
			last.Preemptor = ev.Preemptor
			if ev.Rule == scheduler.RuleReclaim {
				last.Borrowed = s.borrowedBefore(plan, ev)
			}
		}
		prev, known := s.recorded[w.UID]
		alias := "" // the KAI or Run:ai class name its priority was read as (S7)
		var prioFrom, preFrom scheduler.From
		switch {
		case evicted[w.UID] != nil:
			rec.Phase = scheduler.PhasePreempted
			evictionEvent(evicted[w.UID])
		case running[w.UID] != nil:
			for _, ev := range shed[w.UID] { // a semi-preemptible workload's replicas (S26)
				evictionEvent(ev)
			}
			rw := running[w.UID]
			rec.Phase = scheduler.PhaseRunning
			rec.PriorityName, rec.PriorityValue, rec.Preemptibility = rw.Priority.Name, int(rw.Priority.Value), string(rw.Preemptibility)
			alias, prioFrom, preFrom = rw.PriorityAlias, rw.PriorityFrom, rw.PreemptibilityFrom
			rec.NodePool, rec.AllocatedGPUs = rw.NodePool, int(rw.GPUs)
		case pending[w.UID] != nil:
			pw := pending[w.UID]
			rec.PriorityName, rec.PriorityValue, rec.Preemptibility = pw.Priority.Name, int(pw.Priority.Value), string(pw.Preemptibility)
			alias, prioFrom, preFrom = pw.PriorityAlias, pw.PriorityFrom, pw.PreemptibilityFrom
			rec.Reason, rec.Message, rec.QueuePosition = string(pw.Reason), pw.Message, pw.QueuePosition
			if w.Phase == scheduler.PhaseRunning {
				rec.Phase = scheduler.PhasePending // a gang partly bound still waits
			}
		}
		if rec.PriorityName == "" && known {
			// In no list of the plan this cycle (a semi-preemptible workload's replicas
			// terminating, say): its priority and preemptibility are as last recorded.
			rec.PriorityName, rec.PriorityValue, rec.Preemptibility = prev.Priority, prev.PriorityValue, prev.Preemptibility
			alias, prioFrom, preFrom = prev.Alias, prev.PriorityFrom, prev.PreemptibilityFrom
		}
		bound := len(nodesOf[w.UID]) > 0
		evictedNow := evicted[w.UID] != nil || (prev.Evicted && !bound && !resumed[w.UID])
		if evictedNow && evicted[w.UID] == nil && w.Phase != scheduler.PhaseSuspended {
			rec.Phase = scheduler.PhasePreempted // evicted, waiting to come back
		}
		if resumed[w.UID] {
			rec.Phase = scheduler.PhasePending
			event("Resumed", "", "Resumed: admitted again.")
		}
		startsNow := !known || prev.Phase != scheduler.PhaseRunning
		if bound && startsNow {
			rec.Phase = scheduler.PhaseRunning
			rec.Reason, rec.Message, rec.QueuePosition = "", "", 0
			started := now
			rec.StartedAt = &started
		}
		if !known {
			ch.Events = append(ch.Events, Event{Workload: w.UID, At: w.QueuedAt, Kind: "Queued",
				Message: "Queued in project " + orNone(w.Project) + " at priority " + orNone(rec.PriorityName) + aliasNote(alias) + "."})
			if rec.Phase == scheduler.PhaseSuspended {
				event("Suspended", "", "Suspended by Arbiter.")
			}
		}
		if rec.Phase == scheduler.PhaseRunning && startsNow {
			event("Admitted", "", admitted(&rec))
			if !bound && rec.StartedAt != nil {
				// Running already, bound by an earlier leader whose record of it was lost:
				// admitted when the cluster says it started, not when this one first saw it.
				ch.Events[len(ch.Events)-1].At = *rec.StartedAt
			}
		}
		if known && prev.Priority != "" && rec.PriorityName != "" && prev.Priority != rec.PriorityName {
			// The same words as the API's "Changed priority from X to Y by Z.": the store
			// drops this event when a person's change already says it (store.RecordWorkloads).
			event("PriorityChanged", "", "Changed priority from "+prev.Priority+" to "+rec.PriorityName+".")
		}
		next := Recorded{Evicted: evictedNow, Phase: rec.Phase, Reason: rec.Reason, Message: rec.Message, Priority: rec.PriorityName,
			Position: rec.QueuePosition, Allocated: rec.AllocatedGPUs, Requested: rec.RequestedGPUs, NodePool: rec.NodePool,
			Preemptibility: rec.Preemptibility, PriorityValue: rec.PriorityValue,
			PriorityFrom: prioFrom, PreemptibilityFrom: preFrom, Alias: alias}
		if !known || next != prev || bound {
			s.recorded[w.UID] = next
			if rec.PriorityName != "" {
				names := scheduler.Names{Kind: w.Kind, Project: w.Project, Type: w.Type, Category: rec.CategoryName,
					Alias: alias, Priority: rec.PriorityName}
				rec.PriorityFrom, rec.PreemptibilityFrom = prioFrom.PrioritySentence(names), preFrom.PreemptibilitySentence(names)
			}
			ch.Records = append(ch.Records, rec)
		}
	}
	ch.Finished, ch.Stopped = s.finish(len(snap.Workloads), c.Rebuilt, workload, c.Owner)
	return ch
}

// finish ends the workloads that have left the cluster's active set. Every workload of the
// snapshot is recorded by now, so those that left are the records beyond the snapshot's
// count: the absent ones of the last cycle still missing, and those gone in this one (rebuilt,
// and not in the snapshot). When that does not account for every record beyond the count (a
// cycle was not observed, or the state was filled otherwise), every record is looked at.
// A workload whose owner stopped it is not finished: it is recorded Suspended, once.
func (s *State) finish(inSnapshot int, rebuilt []string, workload func(string) *scheduler.Workload, owner func(string) Owner) (map[string]scheduler.Phase, []string) {
	for uid := range s.absent { // records leave only below, and their absence with them
		if workload(uid) != nil {
			delete(s.absent, uid)
		}
	}
	for _, uid := range rebuilt {
		if _, ok := s.recorded[uid]; ok && workload(uid) == nil {
			s.absent[uid] = struct{}{}
		}
	}
	if len(s.recorded)-inSnapshot != len(s.absent) {
		clear(s.absent)
		for uid := range s.recorded {
			if workload(uid) == nil {
				s.absent[uid] = struct{}{}
			}
		}
	}
	if len(s.absent) == 0 {
		return nil, nil
	}
	finished := map[string]scheduler.Phase{}
	var stopped []string
	for uid := range s.absent {
		prev := s.recorded[uid]
		// A workload whose top owner still exists and has not finished is between pods (a
		// Job recreating evicted pods, a Deployment scaled to zero): it has not ended. A
		// workload evicted with no controller left to bring it back (a bare pod) ends as
		// Preempted (S20); a Job that failed ends as Failed; everything else completed.
		o := owner(uid)
		if o.Known && !o.Finished {
			if o.Stopped && prev.Phase != scheduler.PhaseSuspended {
				prev.Phase, prev.Allocated, prev.Position, prev.Reason, prev.Message, prev.Evicted = scheduler.PhaseSuspended, 0, 0, "", "", false
				s.recorded[uid] = prev
				stopped = append(stopped, uid)
			}
			continue
		}
		phase := scheduler.PhaseCompleted
		switch {
		case o.Known && o.Failed:
			phase = scheduler.PhaseFailed
		case !o.Known && prev.Phase == scheduler.PhasePreempted:
			phase = scheduler.PhasePreempted
		}
		finished[uid] = phase
		delete(s.recorded, uid)
		delete(s.absent, uid)
	}
	if len(finished) == 0 {
		finished = nil
	}
	slices.Sort(stopped)
	return finished, stopped
}

func admitted(r *Record) string {
	return "Admitted on [" + strings.Join(r.Nodes, " ") + "] in node pool " + orNone(r.NodePool) + " with " +
		english.Plural(r.RequestedGPUs, "GPU") + "."
}

func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// orNone shows an empty name in a sentence.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// borrowedBefore is how many GPUs the evicted workload's project used beyond its deserved
// quota in the victim's node pool just before this plan's evictions (S17): what it holds there
// after the plan plus what the plan evicts of it there, less its deserved quota. nil when the
// victim's pool is not recorded.
func (s *State) borrowedBefore(plan *scheduler.Plan, ev *scheduler.Eviction) *int64 {
	pool := s.recorded[ev.Workload].NodePool
	if pool == "" {
		return nil
	}
	var allocated, deserved int64
	for _, q := range plan.Projects {
		if q.Name == ev.Project && q.NodePool == pool {
			allocated, deserved = q.Allocated, q.Deserved
		}
	}
	for _, e := range plan.Evictions {
		if e.Project == ev.Project && s.recorded[e.Workload].NodePool == pool {
			allocated += e.GPUs
		}
	}
	b := max(0, allocated-deserved)
	return &b
}

// aliasNote says that a priority was read from a KAI or Run:ai priority class name (S7), so
// that a KAI user sees where "high" came from; "" when it was not.
func aliasNote(alias string) string {
	if alias == "" {
		return ""
	}
	return ", read from its priority class " + alias + " (KAI's and Run:ai's name)"
}
