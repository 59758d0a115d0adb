package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	ks "github.com/arbiterhq/arbiter/internal/testkit/kueuescenario"
)

// Where a round's time went, for the log: what the watch saw of each Job's steps, how many
// GPUs stood free while Jobs waited, Arbiter's own counters, and where a round cut off stood.

// sampleIdle samples, every half second until ctx ends, the GPUs held (pods bound and not
// ended), the GPUs of the Jobs created, not complete and holding none (waiting), and of those
// the GPUs of the ones whose pod exists, unbound (waiting for a node); and adds min(free,
// waiting) × the interval to idleWhileJobsWaited and idleWhilePodsWaited: GPU-seconds that stood
// free while at least as many GPUs' worth of Jobs, or of pods, waited. Jobs without a pod
// wait for the Job controller (or, Kueue's, for admission); pods without a node wait for the
// scheduler. Both overstate what could have been used (a large Job's 20 GPUs must be on one
// node), but a system that leaves GPUs free while work waits shows here. It also splits each
// unbound pod's wait: its department (cohort) at its limit; within it, but no node with the
// pod's GPUs free (fragmentation); within it and such a node there (the scheduler's own time).
func (w *scenarioWatch) sampleIdle(ctx context.Context) {
	const every = 500 * time.Millisecond
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.mu.Lock()
		var held int64
		holding, pending := map[*scenarioJobTimes]bool{}, map[*scenarioJobTimes]bool{}
		heldIn, heldOn := map[string]int64{}, map[string]int64{} // by cohort, by node
		for _, p := range w.pods {
			switch {
			case p.job == nil || !p.succeeded.IsZero():
			case p.bound:
				held += p.job.gpus
				holding[p.job] = true
				heldIn[p.cohort] += p.job.gpus
				heldOn[p.node] += p.job.gpus
			default:
				pending[p.job] = true
			}
		}
		mostFree := int64(0) // on one node
		if len(heldOn) < ks.Nodes {
			mostFree = ks.NodeGPUs
		}
		for _, h := range heldOn {
			mostFree = max(mostFree, ks.NodeGPUs-h)
		}
		for _, p := range w.pods {
			if p.job == nil || !p.succeeded.IsZero() || p.bound {
				continue
			}
			g := float64(p.job.gpus) * every.Seconds()
			switch {
			case heldIn[p.cohort]+p.job.gpus > ks.CohortQuota:
				w.podsWaitedOverQuota += g
			case mostFree < p.job.gpus:
				w.podsWaitedNoNode += g
			default:
				w.podsWaitedPlaceable += g
				w.placeableByReason[cmp.Or(p.reason, "none yet")] += g
			}
		}
		var jobsWaiting, podsWaiting int64
		for _, j := range w.jobs {
			if j.completeAt.IsZero() && !holding[j] {
				jobsWaiting += j.gpus
				if pending[j] {
					podsWaiting += j.gpus
				}
			}
		}
		free := ks.GPUs - held
		w.idleWhileJobsWaited += float64(max(0, min(free, jobsWaiting))) * every.Seconds()
		w.idleWhilePodsWaited += float64(max(0, min(free, podsWaiting))) * every.Seconds()
		w.mu.Unlock()
	}
}

// diagnosis is steps and the GPU-seconds that stood free while Jobs waited, for the log.
func (w *scenarioWatch) diagnosis() string {
	steps := w.steps()
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("; %s; GPU-seconds free while as many GPUs' worth of Jobs waited %.0f, of pods waited for a node %.0f; "+
		"pods' GPU-seconds waiting for a node %.0f with their department at its limit, %.0f within it but no node with their GPUs free, %.0f within it and a node free",
		steps, w.idleWhileJobsWaited, w.idleWhilePodsWaited, w.podsWaitedOverQuota, w.podsWaitedNoNode, w.podsWaitedPlaceable) +
		byReason(w.placeableByReason) + w.tailLocked()
}

// tailLocked says what the round's last twentieth of Jobs to complete have in common: how many
// of them had a pod preempted, and how long a preempted Job waited for its next pod (the Job
// controller counts a deleted pod as failed and backs off: 10 s, doubling); and when the last
// Job never preempted completed, which is where the wall would end if preemption cost nothing
// but the work it undid.
func (w *scenarioWatch) tailLocked() string {
	var done []*scenarioJobTimes
	var first time.Time
	var refills []time.Duration
	for _, j := range w.jobs {
		if first.IsZero() || j.created.Before(first) {
			first = j.created
		}
		if !j.completeAt.IsZero() {
			done = append(done, j)
		}
		if j.interrupted > 0 && j.refill > 0 {
			refills = append(refills, j.refill/time.Duration(j.interrupted))
		}
	}
	if len(done) == 0 {
		return ""
	}
	slices.SortFunc(done, func(a, b *scenarioJobTimes) int { return a.completeAt.Compare(b.completeAt) })
	tail := done[len(done)-max(1, len(done)/20):]
	preempted := 0
	for _, j := range tail {
		if j.interrupted > 0 {
			preempted++
		}
	}
	lastClean := time.Duration(0)
	for _, j := range done {
		if j.interrupted == 0 {
			lastClean = j.completeAt.Sub(first)
		}
	}
	return fmt.Sprintf("; of the last %d Jobs to complete %d had a pod preempted; a preempted Job's next pod came %s after on average; "+
		"the last Job never preempted completed at %s", len(tail), preempted, seconds(mean(refills)), seconds(lastClean))
}

// steps is the average time of each step of a Job's start over the round: created → admitted
// (Kueue's unsuspend; for Arbiter the bind, listed below), → its first pod (the Job
// controller), pod → bound (the scheduler), bound → Running (kwok).
func (w *scenarioWatch) steps() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var admitted, pod, bound, running []time.Duration
	for _, j := range w.jobs {
		if j.podSeen.IsZero() || j.bound.IsZero() || j.running.IsZero() {
			continue
		}
		from := j.created
		if w.kueue {
			admitted = append(admitted, j.admitted.Sub(j.created))
			from = j.admitted
		}
		pod = append(pod, j.podSeen.Sub(from))
		bound = append(bound, j.bound.Sub(j.podSeen))
		running = append(running, j.running.Sub(j.bound))
	}
	s := fmt.Sprintf("Job → its pod %s, pod → bound %s, bound → Running %s", seconds(mean(pod)), seconds(mean(bound)), seconds(mean(running)))
	if w.kueue {
		s = fmt.Sprintf("created → unsuspended %s, unsuspended ", seconds(mean(admitted))) + s
	} else {
		s = "created " + s
	}
	return "average steps: " + s
}

// arbiterCounters reads Arbiter's /metrics: its cycles (count and seconds deciding), binds and
// evictions so far, summed over their labels; nil when it does not answer.
func arbiterCounters(ctx context.Context, url string) map[string]float64 {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return nil
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return nil
	}
	wanted := map[string]string{
		`arbiter_cycle_duration_seconds_count{phase="decide"}`: "cycles",
		`arbiter_cycle_duration_seconds_sum{phase="decide"}`:   "deciding",
		`arbiter_cycle_duration_seconds_sum{phase="apply"}`:    "applying",
		"arbiter_binds_total":                                  "binds",
		"arbiter_evictions_total":                              "evictions",
	}
	m := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		series, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		name := wanted[series]
		if _, rule, ok := strings.Cut(series, `rule="`); ok && strings.HasPrefix(series, "arbiter_evictions_total{") {
			rule, _, _ = strings.Cut(rule, `"`)
			m["evictions "+rule] += parseFloat(value)
		}
		if name == "" {
			name = wanted[strings.SplitN(series, "{", 2)[0]]
		}
		if name == "" {
			continue
		}
		m[name] += parseFloat(value)
	}
	return m
}

// parseFloat is a metric's value, 0 when it is not a number.
func parseFloat(value string) float64 {
	var v float64
	if _, err := fmt.Sscan(value, &v); err != nil {
		return 0
	}
	return v
}

// arbiterActivity formats what Arbiter did between two readings of arbiterCounters.
func arbiterActivity(before, after map[string]float64) string {
	if before == nil || after == nil {
		return "Arbiter's metrics not read"
	}
	d := func(k string) float64 { return after[k] - before[k] }
	cycles := d("cycles")
	return fmt.Sprintf("Arbiter: %.0f cycles (%.1f ms deciding and %.1f ms applying on average), %.0f binds, %.0f evictions (%.0f inside projects, S16; %.0f reclaims, S17)",
		cycles, 1000*d("deciding")/max(cycles, 1), 1000*d("applying")/max(cycles, 1), d("binds"), d("evictions"),
		d("evictions preempt"), d("evictions reclaim"))
}

// progress says, by class, how many Jobs were admitted, Running and complete of those created:
// where a round that does not finish is stuck.
func (w *scenarioWatch) progress() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	type counts struct{ created, admitted, running, complete int }
	by := map[string]*counts{}
	for _, j := range w.jobs {
		c := by[j.class]
		if c == nil {
			c = &counts{}
			by[j.class] = c
		}
		c.created++
		for _, t := range []struct {
			at time.Time
			n  *int
		}{{j.admitted, &c.admitted}, {j.running, &c.running}, {j.completeAt, &c.complete}} {
			if !t.at.IsZero() {
				*t.n++
			}
		}
	}
	unbound := 0
	for _, p := range w.pods {
		if !p.bound && p.succeeded.IsZero() {
			unbound++
		}
	}
	parts := []string{fmt.Sprintf("%d pods not bound", unbound)}
	for _, c := range ks.Classes {
		if n := by[c.Name]; n != nil {
			parts = append(parts, fmt.Sprintf("%s: %d created, %d admitted, %d Running, %d complete", c.Name, n.created, n.admitted, n.running, n.complete))
		}
	}
	return strings.Join(parts, "; ")
}

// byReason lists GPU-seconds by reason, largest first, as " (reason n, …)".
func byReason(m map[string]float64) string {
	if len(m) == 0 {
		return ""
	}
	reasons := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Compare(m[b], m[a]) })
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%s %.0f", r, m[r])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
