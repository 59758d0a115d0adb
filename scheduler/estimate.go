package scheduler

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/arbiterhq/arbiter/internal/english"
)

// This file estimates when each waiting workload will start (docs/scheduling.md "Estimated
// start of every waiting workload"): it simulates forward with the decision core, ending each
// running workload at its expected end and running a cycle (Plan) after each end, and when
// what held back a waiting workload's evictions passes (a preemption delay, a victim's minimum
// runtime: S16, S27), and takes the first simulated time at which a waiting workload is
// admitted. It cannot know what has not happened: submissions to come (of higher priority, or
// reclaiming their quota), workloads ending early or failing.

// AnnotationExpectedRuntime on a top owner is how long the workload is expected to run, as a
// Go duration ("90m", "2h30m"); the start estimate ends it that long after it starts.
const AnnotationExpectedRuntime = "arbiter.dev/expected-runtime"

// DefaultEstimateEvents bounds the end events one estimate simulates (ends close together
// count as one, see EstimateGranularity).
const DefaultEstimateEvents = 64

// EstimateGranularity is how close ends must be to be simulated as one event, followed by
// one cycle: an estimate is no finer than this, and goes that much further for the same cost.
const EstimateGranularity = time.Minute

// RuntimeKey names the workloads a median runtime is taken over: one type in one project.
type RuntimeKey struct{ Project, Type string }

// EstimateInput is what an estimate needs beyond the snapshot.
type EstimateInput struct {
	// Medians are the median runtimes of finished workloads by project and type (the
	// workload records), used for running work with neither a deadline nor an annotation.
	Medians map[RuntimeKey]time.Duration
	// MaxEvents bounds the end events simulated; DefaultEstimateEvents when 0.
	MaxEvents int
	// First, when the caller has it, is the snapshot's own plan (Plan()): the estimate starts
	// from it instead of planning the snapshot again, a whole cycle at large sizes. It is
	// only read.
	First *Plan
}

// Estimate is when a waiting workload is expected to start, and on what basis. At is zero
// when it cannot be told; Basis then says what is missing.
type Estimate struct {
	At    time.Time
	Basis string
}

// expectedEnd is how a running workload's end is foreseen.
type expectedEnd struct {
	at     time.Time
	source string // "activeDeadlineSeconds", the annotation, or the median
	known  bool
}

// endOf foresees the end of a workload started at start: its deadline, else start plus the
// annotated runtime, else start plus the median runtime of its type in its project. A
// foreseen end already past is taken as now: the workload is overdue and may end any moment.
func endOf(w *Workload, start, now time.Time, medians map[RuntimeKey]time.Duration) expectedEnd {
	var e expectedEnd
	switch {
	case !w.Deadline.IsZero():
		e = expectedEnd{at: w.Deadline, source: "its activeDeadlineSeconds", known: true}
	case w.Annotations[AnnotationExpectedRuntime] != "":
		d, err := time.ParseDuration(w.Annotations[AnnotationExpectedRuntime])
		if err != nil || d <= 0 {
			return e
		}
		e = expectedEnd{at: start.Add(d), source: "its " + AnnotationExpectedRuntime + " annotation", known: true}
	default:
		d, ok := medians[RuntimeKey{w.Project, w.Type}]
		if !ok || d <= 0 {
			return e
		}
		e = expectedEnd{at: start.Add(d), source: "the median runtime of finished " + w.Type + " workloads in " + w.Project, known: true}
	}
	if e.at.Before(now) {
		e.at = now
	}
	return e
}

// simulation is the state of an estimate: a copy of the snapshot's workload list (a workload
// whose pods change gets its own copy of them), and the ends still to come.
type simulation struct {
	s       Snapshot
	byUID   map[string]int
	ends    []simEnd // sorted by time, then UID
	unknown map[string]bool
	in      EstimateInput
}

// simEnd is an event of the simulation: workload wl's end, or (wl -1) when what held back
// the evictions of waiting workloads passes: held says what, by workload UID, and heldFor is
// the first of them.
type simEnd struct {
	at      time.Time
	wl      int
	end     expectedEnd
	held    map[string]string
	heldFor int
}

// EstimateStarts estimates, for every workload the snapshot's cycle leaves waiting, when it
// starts. The snapshot is not modified. At most in.MaxEvents ends are simulated, each followed
// by a cycle (two when it evicts, so that the preemptor is admitted).
func (s *Snapshot) EstimateStarts(in EstimateInput) map[string]Estimate {
	if in.MaxEvents <= 0 {
		in.MaxEvents = DefaultEstimateEvents
	}
	sim := &simulation{s: *s, byUID: make(map[string]int, len(s.Workloads)), unknown: map[string]bool{}, in: in}
	sim.s.Workloads = slices.Clone(s.Workloads)
	foreseen := false // some pods are foreseen now, and made in the simulation's first seconds
	for i := range sim.s.Workloads {
		w := &sim.s.Workloads[i]
		if !w.PodsDue.IsZero() {
			foreseen = true
			*w = withForeseenPodsMade(*w, s.Now) // (foreseen_pods.go)
		}
		sim.byUID[w.UID] = i
		switch {
		case w.PreemptedBy != "" && slices.ContainsFunc(w.Pods, func(p Pod) bool { return p.Terminating }):
			// being evicted: gone within its grace period
			se := simEnd{at: s.Now, wl: i, end: expectedEnd{at: s.Now, source: "its eviction", known: true}}
			sim.ends = append([]simEnd{se}, sim.ends...)
		case w.Phase == PhaseRunning:
			sim.addEnd(i, w.StartedAt)
		}
	}

	out := map[string]Estimate{}
	waiting := map[string]bool{}
	t := s.Now
	var last *simEnd // the end that let the latest starts happen
	ended, events := 0, 0
	for first := true; ; first = false {
		var plan Plan // the last cycle's, at t
		for round := 0; round < 3; round++ {
			if first && round == 0 && in.First != nil {
				plan = *in.First
			} else {
				plan = sim.s.plan(first && round == 0)
			}
			unknown := len(sim.unknown) // before what starts now adds its own
			if first && round == 0 {
				for _, p := range plan.Pending {
					waiting[p.Workload] = true
				}
			}
			started := sim.apply(&plan, t)
			// The simulation carries a plan out at once (victims gone, pods made), and the
			// workloads reserved for are tried first in the next cycle: reservations, which
			// bridge the seconds that takes in the cluster, have done their work.
			sim.s.Reservations = nil
			if first && round == 0 {
				// what the first cycle admits waits too, for seconds
				for _, uid := range started {
					waiting[uid] = true
				}
			}
			for _, uid := range started {
				if waiting[uid] {
					if _, done := out[uid]; !done {
						out[uid] = Estimate{At: t, Basis: sim.basis(uid, t, s.Now, last, ended, unknown)}
					}
				}
			}
			// a cycle binds all that fits on free capacity; only what it evicts or resumes for
			// is admitted in a further cycle, and in the first, what waited for its pods
			if len(plan.Evictions) == 0 && len(plan.Resumes) == 0 && !(first && round == 0 && foreseen) {
				break
			}
		}
		wake := sim.wake(&plan, t) // the earliest time evictions held back for a waiting workload may be made
		if len(waiting) == 0 || len(out) == len(waiting) || len(sim.ends) == 0 && wake.at.IsZero() || events >= in.MaxEvents {
			break
		}
		if !wake.at.IsZero() && (len(sim.ends) == 0 || wake.at.Before(sim.ends[0].at)) {
			t, sim.s.Now, last = wake.at, wake.at, &wake // nothing ends: the next cycle may evict
			events++
			continue
		}
		// the next end, and every end within a minute of it: one cycle for them all, at the
		// last of them (so nothing is foreseen to start before its room is free)
		horizon := sim.ends[0].at.Add(EstimateGranularity)
		for len(sim.ends) > 0 && sim.ends[0].at.Before(horizon) {
			t = sim.ends[0].at
			e := sim.ends[0]
			sim.ends = sim.ends[1:]
			sim.s.Workloads[e.wl].Phase = PhaseCompleted
			last = &e
			ended++
		}
		sim.s.Now = t // what depends on the time (a minimum runtime, a delay) sees it pass
		events++
	}
	for uid := range waiting {
		if _, done := out[uid]; !done {
			out[uid] = Estimate{Basis: sim.unknownBasis(events, in.MaxEvents)}
		}
	}
	return out
}

// wake is the earliest time after t at which evictions held back for a workload the plan
// leaves waiting may be made, with every workload held until then; its at is zero when none
// is held.
func (sim *simulation) wake(plan *Plan, t time.Time) simEnd {
	wake := simEnd{wl: -1}
	for _, p := range plan.Pending {
		if p.EvictionsFrom.After(t) && (wake.at.IsZero() || p.EvictionsFrom.Before(wake.at)) {
			wake.at, wake.heldFor = p.EvictionsFrom, sim.byUID[p.Workload]
			wake.end = expectedEnd{at: p.EvictionsFrom, source: p.EvictionsHeldBy, known: true}
		}
	}
	if !wake.at.IsZero() {
		wake.held = map[string]string{}
		for _, p := range plan.Pending {
			if p.EvictionsFrom.Equal(wake.at) {
				wake.held[p.Workload] = p.EvictionsHeldBy
			}
		}
	}
	return wake
}

// addEnd schedules the end of workload i, started at start, or notes it as unknown.
func (sim *simulation) addEnd(i int, start time.Time) {
	w := &sim.s.Workloads[i]
	e := endOf(w, start, sim.s.Now, sim.in.Medians)
	if !e.known {
		sim.unknown[w.UID] = true
		return
	}
	delete(sim.unknown, w.UID)
	se := simEnd{at: e.at, wl: i, end: e}
	at, _ := slices.BinarySearchFunc(sim.ends, se, func(a, b simEnd) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(sim.s.Workloads[a.wl].UID, sim.s.Workloads[b.wl].UID)
	})
	sim.ends = slices.Insert(sim.ends, at, se)
}

// dropEnd forgets the end of workload i (it was evicted).
func (sim *simulation) dropEnd(i int) {
	sim.ends = slices.DeleteFunc(sim.ends, func(e simEnd) bool { return e.wl == i })
	delete(sim.unknown, sim.s.Workloads[i].UID)
}

// apply carries a plan out in the simulation at time t, as the cluster would within seconds:
// bound pods run, victims are gone (their pods deleted, back in the queue; a suspended one
// waits as suspended), resumed and nominated workloads are tried first in the next cycle. It
// returns the workloads that started: bound, resumed, or with their victims evicted.
func (sim *simulation) apply(plan *Plan, t time.Time) []string {
	var started []string
	touched := map[int]bool{}
	for _, b := range plan.Binds {
		i := sim.byUID[b.Workload]
		w := &sim.s.Workloads[i]
		if !touched[i] {
			touched[i] = true
			w.Pods = slices.Clone(w.Pods)
		}
		for k := range w.Pods {
			if w.Pods[k].UID == b.Pod.UID && w.Pods[k].Name == b.Pod.Name {
				w.Pods[k].NodeName = b.Node
			}
		}
	}
	for i := range touched {
		w := &sim.s.Workloads[i]
		if w.Phase != PhaseRunning {
			w.Phase, w.StartedAt, w.Nominated = PhaseRunning, t, false
			sim.addEnd(i, t)
			started = append(started, w.UID)
		}
	}
	for _, e := range plan.Evictions {
		i := sim.byUID[e.Workload]
		v := &sim.s.Workloads[i]
		v.Pods = slices.Clone(v.Pods)
		for k := range v.Pods {
			v.Pods[k].NodeName = ""
		}
		v.Phase, v.PreemptedBy, v.WaitingSince = PhasePending, "", t
		if e.Mode == Suspend {
			v.Phase = PhaseSuspended
		}
		sim.dropEnd(i)
		if p, ok := sim.byUID[e.Preemptor]; ok {
			sim.s.Workloads[p].Nominated = true
		}
	}
	for _, e := range plan.Evictions {
		if !slices.Contains(started, e.Preemptor) {
			started = append(started, e.Preemptor)
		}
	}
	for _, r := range plan.Resumes {
		i := sim.byUID[r.Workload]
		w := &sim.s.Workloads[i]
		// its controller recreates the pods, which the next cycle binds first
		w.Phase, w.Nominated = PhasePending, true
		w.Pods = slices.Clone(w.Pods)
		for k := range w.Pods {
			w.Pods[k].UID = w.UID + "-resumed-" + strconv.Itoa(k)
			w.Pods[k].Name = w.Pods[k].UID
		}
		started = append(started, w.UID)
	}
	return started
}

// basis says why workload uid starts at t.
func (sim *simulation) basis(uid string, t, now time.Time, last *simEnd, ended, unknown int) string {
	if last == nil || !t.After(now) {
		return "It can start now: capacity is free, or the workloads it preempts are being evicted."
	}
	var s string
	if last.wl < 0 {
		if own, ok := last.held[uid]; ok {
			s = "Simulated: it starts once " + own + " has passed"
		} else {
			// the hold's words ("the work it could preempt") are of the workload held: they go
			// in a clause of its own, so that "it" is that one, not the one estimated
			h := &sim.s.Workloads[last.heldFor]
			s = "Simulated: it starts when " + h.Namespace + "/" + h.Name + ", which waits until " + last.end.source + " has passed, may evict"
		}
		if ended > 0 {
			s += ", after the end of " + english.Plural(ended, "running workload")
		}
		s += "; assuming no new work of higher priority arrives"
	} else {
		w := &sim.s.Workloads[last.wl]
		s = "Simulated: it starts after the end of " + english.Plural(ended, "running workload") + " (the last, " +
			w.Namespace + "/" + w.Name + " at " + last.end.source + "); assuming no new work of higher priority arrives"
	}
	if unknown > 0 {
		s += " (" + english.Plural(unknown, "running workload") + " with no expected end assumed to run on)"
	}
	return s + "."
}

// unknownBasis says why a workload's start cannot be told.
func (sim *simulation) unknownBasis(events, maxEvents int) string {
	switch {
	case events >= maxEvents && len(sim.ends) > 0:
		return "Unknown: it does not start within the next " + strconv.Itoa(maxEvents) + " ends of running workloads the estimate simulates."
	case len(sim.unknown) > 0:
		n := len(sim.unknown)
		its := english.Agree(n, "its", "their")
		return "Unknown: " + english.Plural(n, "running workload") + " it may wait for " + english.Agree(n, "has", "have") +
			" no expected end: no activeDeadlineSeconds, no " + AnnotationExpectedRuntime +
			" annotation, and no finished workloads of " + its + " type in " + its + " project to take a median runtime from."
	default:
		return "Unknown: it would not start even once every running workload has ended; see its reason."
	}
}
