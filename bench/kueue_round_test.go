package bench

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// peerExplained is how many of a Kueue round's slowest submissions have their timeline logged.
const peerExplained = 3

// peerRound runs one round of pc for system: its fill Jobs (fillPrefix-fill-…, created unless
// fresh is false: kept from the system's previous round) all Running, reported ready by their
// Jobs (and, for Kueue, in their Workloads), then peerSamples submissions one at a time, each
// timed from its create to its pod Running as the pod watch saw it. Then every Job, pod and
// Workload of the round is deleted and waited for, or, if keep, only the submissions' (the
// fill's preempted Jobs then run again, and the next round waits until they do). It returns
// the latencies, and logs how long each phase took and where the slowest submissions' time went.
func (cb *clusterBench) peerRound(dyn dynamic.Interface, trace *kueueTrace, pc peerCase, system, prefix, fillPrefix string, fresh, keep bool) []time.Duration {
	b := cb.b
	b.Helper()
	fillNS, submitNS := pc.fillNS[system], pc.submitNS[system]
	cb.running.Store(0)
	start := time.Now()
	if fresh {
		var first atomic.Value
		failed := concurrently(pc.fill, func(i int) error {
			err := cb.createJob(system, pc.fillJob(fmt.Sprintf("%s-fill-%d", fillPrefix, i), fillNS, system))
			if err != nil {
				first.CompareAndSwap(nil, err.Error())
			}
			return err
		})
		if failed > 0 {
			b.Fatalf("%d Job creations failed; the first: %v", failed, first.Load())
		}
		if took, ok := cb.waitRunning(int64(pc.fill), 10*time.Minute); !ok {
			b.Fatalf("%s, %s: only %d of %d fill Jobs Running after %s", pc.name, systemName[system], cb.running.Load(), pc.fill, took)
		}
	}
	running := time.Since(start)
	cb.waitJobsReady(fillNS, pc.fill, 5*time.Minute)
	ready := time.Since(start)
	filled := ready
	settled := ""
	if system == systemKueue {
		// Kueue's Job reconciler is still working through the fill's Jobs when their pods are
		// ready: a Job submitted then waits behind them, seconds to minutes at this size, before
		// Kueue so much as creates its Workload. That is the fill's tail, not reclaim, so the
		// submissions start once Kueue has recorded every fill Job's pods ready, as they start
		// for Arbiter once the Job controller has.
		poll.Until(b, "Kueue records every fill Workload's pods ready", 5*time.Minute, func() bool { return trace.podsReady(fillNS) >= pc.fill })
		settled = fmt.Sprintf(", in Kueue's Workloads after %s", time.Since(start).Round(time.Millisecond))
		filled = time.Since(start)
	}
	// What the fill gave the control plane to do is done before the first submission (the Job
	// controller's and Kueue's status writes, stored and sent to every watch), so that no
	// submission shares the two cores with it (docs/performance.md, "Reclaim and preemption").
	if quietAfter, quiet := waitQuiet(cb.pids(), time.Minute); quiet {
		settled += fmt.Sprintf(", the control plane quiet %s later", quietAfter.Round(100*time.Millisecond))
	} else {
		settled += fmt.Sprintf(", the control plane still busy %s later", quietAfter.Round(time.Second))
	}
	filled = time.Since(start)

	type sample struct {
		name                               string
		submitted, podSeen, bound, started time.Time
		victim                             podEnd // Arbiter's: the fill pod evicted for it, if one was seen
	}
	var samples []sample
	cpu := cb.readCPU() // what each process used while the submissions were timed
	var counters map[string]float64
	if system == systemArbiter {
		counters = arbiterCounters(cb.ctx, cb.arbiter.url)
	}
	for i := 0; i < peerSamples; i++ {
		name := fmt.Sprintf("%s-mine-%d", prefix, i)
		submitted := time.Now()
		if err := cb.createJob(system, pc.submitJob(name, submitNS, system)); err != nil {
			b.Fatal(err)
		}
		s := sample{name: name, submitted: submitted}
		if !poll.Within(2*time.Minute, func() bool {
			cb.podsMu.Lock()
			defer cb.podsMu.Unlock()
			key := submitNS + "/" + name
			s.started, s.podSeen, s.bound = cb.jobStarted[key], cb.jobPodSeen[key], cb.jobPodBound[key]
			return !s.started.IsZero()
		}) {
			b.Fatalf("%s, %s: %s did not start within two minutes: %s", pc.name, systemName[system], name,
				trace.explain(submitNS+"/"+name, s.submitted, s.podSeen, s.bound, s.started))
		}
		if system == systemArbiter {
			if e, ok := cb.firstEndAfter(fillNS, s.podSeen); ok && e.marked.Before(s.bound) {
				s.victim = e
			}
		}
		samples = append(samples, s)
	}
	submittedAll := time.Since(start)
	submissionsCPU := cb.readCPU().since(cpu)
	activity := ""
	if system == systemArbiter {
		activity = "; " + arbiterActivity(counters, arbiterCounters(cb.ctx, cb.arbiter.url))
	}
	latency := func(s sample) time.Duration { return s.started.Sub(s.submitted) }
	latencies := make([]time.Duration, len(samples))
	for i, s := range samples {
		latencies[i] = latency(s)
	}
	slowest := slices.Clone(samples)
	slices.SortFunc(slowest, func(x, y sample) int { return int(latency(y) - latency(x)) })
	for i, s := range slowest[:min(peerExplained, len(slowest))] {
		where := fmt.Sprintf("its pod created %s after the submission, bound %s later, Running %s after that",
			s.podSeen.Sub(s.submitted).Round(time.Millisecond), s.bound.Sub(s.podSeen).Round(time.Millisecond), s.started.Sub(s.bound).Round(time.Millisecond))
		if e := s.victim; !e.gone.IsZero() {
			where += fmt.Sprintf("; %s marked for deletion %s after the pod was created, gone %s later, the pod bound %s after that",
				e.pod, e.marked.Sub(s.podSeen).Round(time.Millisecond), e.gone.Sub(e.marked).Round(time.Millisecond), s.bound.Sub(e.gone).Round(time.Millisecond))
		}
		if system == systemKueue {
			where = trace.explain(submitNS+"/"+s.name, s.submitted, s.podSeen, s.bound, s.started)
		}
		b.Logf("%s, %s, slowest %d: %s, %s (submission %d of %d)", pc.name, systemName[system], i+1, s.name, latency(s).Round(time.Millisecond),
			slices.IndexFunc(samples, func(x sample) bool { return x.name == s.name })+1, len(samples))
		b.Logf("    %s", where)
	}

	if system == systemArbiter {
		b.Logf("%s, %s: %s", pc.name, systemName[system], stepQuantiles(len(samples), func(i int) []time.Duration {
			s := samples[i]
			steps := []time.Duration{s.podSeen.Sub(s.submitted), 0, 0, 0, s.started.Sub(s.bound)}
			if e := s.victim; !e.gone.IsZero() {
				steps[1], steps[2], steps[3] = e.marked.Sub(s.podSeen), e.gone.Sub(e.marked), s.bound.Sub(e.gone)
			}
			return steps
		}))
	}

	kueue := system == systemKueue
	var cleaned string
	if keep {
		cleaned = "kept the fill; " + cb.cleanRound(dyn, kueue, peerJobs{submitNS, prefix + "-mine", peerSamples})
	} else {
		cleaned = cb.cleanRound(dyn, kueue, peerJobs{fillNS, fillPrefix + "-fill", pc.fill}, peerJobs{submitNS, prefix + "-mine", peerSamples})
		trace.forget()
	}
	b.Logf("%s, %s: %d fill Jobs (new: %t) Running after %s, their pods ready in the Jobs after %s%s; %d submissions in %s (%s%s); %s",
		pc.name, systemName[system], pc.fill, fresh, running.Round(time.Millisecond), ready.Round(time.Millisecond), settled,
		peerSamples, (submittedAll - filled).Round(time.Millisecond), submissionsCPU, activity, cleaned)
	cb.lagPercentile() // drop the round's per-pod samples
	return latencies
}

// peerJobs names n Jobs of a round, prefix-0 … prefix-(n-1) in namespace ns.
type peerJobs struct {
	ns, prefix string
	n          int
}

// cleanRound deletes the Jobs and, at once, every pod and (for Kueue) every Workload in their
// namespaces, rather than leaving those to the garbage collector, which looks up each one's
// owner before deleting it; then it waits until no Job, pod or Workload is left there, deletes
// the namespaces' events, and says how long the deletes and the wait took.
func (cb *clusterBench) cleanRound(dyn dynamic.Interface, kueue bool, jobs ...peerJobs) string {
	b := cb.b
	b.Helper()
	start := time.Now()
	var namespaces []string
	for _, j := range jobs {
		cb.deleteJobs(j.ns, j.prefix, j.n)
		if !slices.Contains(namespaces, j.ns) {
			namespaces = append(namespaces, j.ns)
		}
	}
	for _, ns := range namespaces {
		pods, err := cb.client.CoreV1().Pods(ns).List(cb.ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			b.Fatal(err)
		}
		concurrently(len(pods.Items), func(i int) error {
			return cb.client.CoreV1().Pods(ns).Delete(cb.ctx, pods.Items[i].Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		})
		if !kueue {
			continue
		}
		workloads, err := dyn.Resource(kueueWorkloads).Namespace(ns).List(cb.ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			b.Fatal(err)
		}
		concurrently(len(workloads.Items), func(i int) error {
			return dyn.Resource(kueueWorkloads).Namespace(ns).Delete(cb.ctx, workloads.Items[i].GetName(), metav1.DeleteOptions{})
		})
	}
	deleted := time.Since(start)
	for _, ns := range namespaces {
		poll.UntilNil(b, "the round's Jobs, pods and Workloads are gone", 5*time.Minute, func() error {
			left := map[string]int64{}
			one := metav1.ListOptions{Limit: 1}
			jobs, err := cb.client.BatchV1().Jobs(ns).List(cb.ctx, one)
			if err != nil {
				return err
			}
			pods, err := cb.client.CoreV1().Pods(ns).List(cb.ctx, one)
			if err != nil {
				return err
			}
			workloads, err := dyn.Resource(kueueWorkloads).Namespace(ns).List(cb.ctx, one)
			if err != nil {
				return err
			}
			for what, n := range map[string]int64{
				"Jobs":      count(jobs, len(jobs.Items)),
				"pods":      count(pods, len(pods.Items)),
				"Workloads": count(workloads, len(workloads.Items)),
			} {
				if n > 0 {
					left[what] = n
				}
			}
			if len(left) > 0 {
				return fmt.Errorf("left in %s: %v", ns, left)
			}
			return nil
		})
		if err := cb.client.CoreV1().Events(ns).DeleteCollection(cb.ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			b.Logf("events in %s not deleted: %v", ns, err)
		}
	}
	return fmt.Sprintf("clean-up %s (deletes sent in %s)", time.Since(start).Round(time.Millisecond), deleted.Round(time.Millisecond))
}

// count is how many objects a one-object page of a list stands for: those on it and what the
// API server says is left, so that a wait does not transfer thousands of objects per check.
func count(page metav1.ListInterface, onPage int) int64 {
	n := int64(onPage)
	if r := page.GetRemainingItemCount(); r != nil {
		n += *r
	} else if page.GetContinue() != "" {
		n++ // more, uncounted
	}
	return n
}

// stepQuantiles says, over n submissions of Arbiter's, the p50 and p99 of each step from
// submission to Running: the Job controller makes the pod; Arbiter evicts a victim (its deletion
// mark seen); kwok deletes it; Arbiter binds the pod once the victim is gone; kwok starts it.
// steps(i) gives submission i's, in that order, with 0 for the three middle steps where no
// victim was seen (those count only in the first and last).
func stepQuantiles(n int, steps func(i int) []time.Duration) string {
	names := []string{"Job controller: submitted → pod", "Arbiter: pod → victim's deletion", "kwok: deletion → victim gone",
		"Arbiter: victim gone → pod bound", "kwok: bound → Running"}
	by := make([][]time.Duration, len(names))
	evicted := 0
	for i := range n {
		st := steps(i)
		if st[2] > 0 {
			evicted++
		}
		for k, d := range st {
			if st[2] > 0 || k == 0 || k == len(st)-1 {
				by[k] = append(by[k], d)
			}
		}
	}
	parts := []string{fmt.Sprintf("%d of %d submissions evicted a victim seen; steps p50 / p99", evicted, n)}
	for k, name := range names {
		q := quantiles(by[k], []float64{0.5, 0.99})
		parts = append(parts, fmt.Sprintf("%s %s / %s", name, q[0].Round(time.Millisecond), q[1].Round(time.Millisecond)))
	}
	return strings.Join(parts, "; ")
}
