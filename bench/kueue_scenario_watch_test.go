package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	ks "github.com/arbiterhq/arbiter/internal/testkit/kueuescenario"
)

// scenarioJobTimes is what a round's watches saw of one Job: when it was created (the create
// sent), admitted (Kueue: the Job unsuspended; Arbiter: its pod bound), Running (its first pod
// Running) and complete (its Complete condition).
type scenarioJobTimes struct {
	class                                  string
	gpus, runSeconds                       int64
	created, admitted, running, completeAt time.Time
	// podSeen and bound are when its first pod was seen, and first bound to a node.
	podSeen, bound time.Time
	// interrupted counts its pods that ended without succeeding (preempted); interruptedAt is
	// the last such end while no pod has come after it, and refill sums the times from such an
	// end to its next pod (the Job controller's back-off)
	interrupted   int
	interruptedAt time.Time
	refill        time.Duration
}

// scenarioPodTimes is when a pod was first seen Running and Succeeded.
type scenarioPodTimes struct {
	running, succeeded time.Time
	bound              bool
	node               string
	cohort             string // the department or cohort of its namespace
	reason             string // of its PodScheduled=False condition, while it waits
	job                *scenarioJobTimes
}

// scenarioWatch watches one round's Jobs and pods (by the round's label) and keeps the times
// above; its maps hold one round's 1,500 Jobs and their pods, and end with it.
type scenarioWatch struct {
	kueue    bool              // admission is the unsuspend, not the bind
	cohortOf map[string]string // each namespace's department (cohort)
	mu       sync.Mutex
	jobs     map[string]*scenarioJobTimes // namespace/name
	pods     map[string]*scenarioPodTimes // namespace/name
	// done counts the Jobs seen complete and work sums their GPUs × the seconds they asked to
	// run; of the pods seen to finish, occupied sums their GPUs × (Succeeded − Running) as seen, and
	// completionLag is how long after their seconds from being seen Running they were seen
	// Succeeded (kwok's lateness and the watch's); interrupted counts pods
	// that ended otherwise (preempted).
	done           int
	work, occupied float64
	completionLag  []time.Duration
	interrupted    int
	lost           float64 // GPU-seconds the interrupted pods had run: work done again
	// GPU-seconds free while Jobs, or pods, waited (sampleIdle)
	idleWhileJobsWaited, idleWhilePodsWaited float64
	// pods' GPU-seconds of waiting for a node (sampleIdle): with their department or cohort at
	// its limit; within it but no node with their GPUs free; within it with such a node
	podsWaitedOverQuota, podsWaitedNoNode, podsWaitedPlaceable float64
	placeableByReason                                          map[string]float64 // the last, by the pod's reason
	cancel                                                     context.CancelFunc
}

func startScenarioWatch(b *testing.B, ctx context.Context, client kubernetes.Interface, round string, kueue bool, cohortOf map[string]string) *scenarioWatch {
	b.Helper()
	ctx, cancel := context.WithCancel(ctx)
	w := &scenarioWatch{kueue: kueue, jobs: map[string]*scenarioJobTimes{}, pods: map[string]*scenarioPodTimes{}, placeableByReason: map[string]float64{}, cohortOf: cohortOf, cancel: cancel}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = scenarioRoundLabel + "=" + round
	}))
	_, _ = factory.Batch().V1().Jobs().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observeJob(obj.(*batchv1.Job)) },
		UpdateFunc: func(_, obj any) { w.observeJob(obj.(*batchv1.Job)) },
	})
	_, _ = factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observePod(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { w.observePod(obj.(*corev1.Pod)) },
		DeleteFunc: func(obj any) {
			if gone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = gone.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				w.podGone(p)
			}
		},
	})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	go w.sampleIdle(ctx)
	return w
}

func (w *scenarioWatch) stop() { w.cancel() }

// created records a Job about to be created.
func (w *scenarioWatch) created(key, class string, gpus, runSeconds int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.jobs[key] = &scenarioJobTimes{class: class, gpus: gpus, runSeconds: runSeconds, created: time.Now()}
}

func (w *scenarioWatch) completed() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done
}

func (w *scenarioWatch) observeJob(j *batchv1.Job) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.jobs[j.Namespace+"/"+j.Name]
	if t == nil {
		return
	}
	if w.kueue && t.admitted.IsZero() && j.Spec.Suspend != nil && !*j.Spec.Suspend {
		t.admitted = now
	}
	if t.completeAt.IsZero() {
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				t.completeAt = now
				w.done++
				w.work += float64(t.gpus) * float64(t.runSeconds)
			}
		}
	}
}

func (w *scenarioWatch) observePod(p *corev1.Pod) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	key := p.Namespace + "/" + p.Name
	pt := w.pods[key]
	isNew := pt == nil
	if isNew {
		pt = &scenarioPodTimes{job: w.jobs[p.Namespace+"/"+p.Labels[batchv1.JobNameLabel]], cohort: w.cohortOf[p.Namespace]}
		w.pods[key] = pt
	}
	j := pt.job
	if j == nil {
		return
	}
	if j.podSeen.IsZero() {
		j.podSeen = now
	}
	if isNew && !j.interruptedAt.IsZero() {
		j.refill += now.Sub(j.interruptedAt) // a new pod after an interrupted one
		j.interruptedAt = time.Time{}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			pt.reason = c.Reason
		}
	}
	if p.Spec.NodeName != "" {
		pt.bound, pt.node = true, p.Spec.NodeName
		if j.bound.IsZero() {
			j.bound = now
		}
		if !w.kueue && j.admitted.IsZero() {
			j.admitted = now
		}
	}
	switch p.Status.Phase {
	case corev1.PodRunning:
		if pt.running.IsZero() {
			pt.running = now
		}
		if j.running.IsZero() {
			j.running = now
		}
	case corev1.PodSucceeded:
		if pt.succeeded.IsZero() && !pt.running.IsZero() {
			pt.succeeded = now
			w.occupied += float64(j.gpus) * now.Sub(pt.running).Seconds()
			w.completionLag = append(w.completionLag, now.Sub(pt.running.Add(time.Duration(j.runSeconds)*time.Second)))
		}
	case corev1.PodFailed:
		w.interruptedLocked(p)
	}
}

// podGone counts a pod deleted before it succeeded.
func (w *scenarioWatch) podGone(p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.interruptedLocked(p)
}

// interruptedLocked counts a pod that ended without succeeding, once (a failed pod is later
// deleted too).
func (w *scenarioWatch) interruptedLocked(p *corev1.Pod) {
	pt := w.pods[p.Namespace+"/"+p.Name]
	if pt == nil || !pt.succeeded.IsZero() {
		return
	}
	pt.succeeded = time.Unix(0, 0) // ended: counted once
	w.interrupted++
	if pt.job != nil {
		pt.job.interrupted++
		pt.job.interruptedAt = time.Now()
	}
	if !pt.running.IsZero() && pt.job != nil {
		w.lost += float64(pt.job.gpus) * time.Since(pt.running).Seconds()
	}
}

// scenarioResult is one round's figures.
type scenarioResult struct {
	wall time.Duration // first create → last Job complete
	// work is the GPU-seconds asked for by the Jobs complete; occupied the
	// GPU-seconds they held from Running to Succeeded as the watch saw them, which kwok's
	// lateness lengthens (completionLag says by how much)
	work, occupied float64
	completionLag  []time.Duration
	interrupted    int
	lost           float64                    // GPU-seconds the interrupted pods had run
	unfinished     int                        // Jobs not complete by the cut-off
	admit, run     map[string][]time.Duration // by class: created → admitted, created → Running
	cpuSeconds     float64                    // the scheduling processes' CPU over the round
	peakMB         float64                    // their peak resident memory over the round, summed
	activity       string                     // what Arbiter's metrics say it did; "" for Kueue
	diagnosis      string                     // where the time went (scenarioWatch.diagnosis)
}

// usage is the work done over the GPUs' capacity during the wall time: the bound's work,
// not the GPU-seconds held, so that kwok completing pods late under load is not counted as
// use.
func (r scenarioResult) usage() float64 { return r.work / (ks.GPUs * r.wall.Seconds()) }

// result is the round's figures; cutOff is when a round that has not finished was cut off.
func (w *scenarioWatch) result(cutOff time.Time) scenarioResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := scenarioResult{work: w.work, occupied: w.occupied, completionLag: w.completionLag, interrupted: w.interrupted, lost: w.lost, admit: map[string][]time.Duration{}, run: map[string][]time.Duration{}}
	var first, last time.Time
	for _, j := range w.jobs {
		if first.IsZero() || j.created.Before(first) {
			first = j.created
		}
		if j.completeAt.IsZero() {
			r.unfinished++
			last = cutOff
		} else if j.completeAt.After(last) {
			last = j.completeAt
		}
		// A Job never admitted or Running by the cut-off counts as waiting until then.
		r.admit[j.class] = append(r.admit[j.class], or(j.admitted, cutOff).Sub(j.created))
		r.run[j.class] = append(r.run[j.class], or(j.running, cutOff).Sub(j.created))
	}
	r.wall = last.Sub(first)
	return r
}

// summary is the round's sentence for the log.
func (r scenarioResult) summary(bounds ks.Bounds) string {
	var classes []string
	for _, c := range ks.Classes {
		classes = append(classes, fmt.Sprintf("%s admitted avg %s p90 %s, Running avg %s p90 %s", c.Name,
			seconds(mean(r.admit[c.Name])), seconds(quantiles(r.admit[c.Name], []float64{0.9})[0]),
			seconds(mean(r.run[c.Name])), seconds(quantiles(r.run[c.Name], []float64{0.9})[0])))
	}
	lag := quantiles(r.completionLag, []float64{0.5, 0.9, 1})
	unfinished := ""
	if r.unfinished > 0 {
		unfinished = fmt.Sprintf(" CUT OFF with %d Jobs unfinished", r.unfinished)
	}
	return fmt.Sprintf("wall %s%s (%.2f× the bound %s, %.2f× the arrivals' %s), usage %.1f%% of at most %.1f%% (%.0f GPU-seconds of work done; held Running→Succeeded %.0f), %d pods preempted after %.0f GPU-seconds of their run; "+
		"pods seen Succeeded after Running + their seconds p50 %s p90 %s max %s; %s; scheduling CPU %.1fs, peak memory %.0f MB",
		seconds(r.wall), unfinished, r.wall.Seconds()/bounds.WorkBound.Seconds(), seconds(bounds.WorkBound),
		r.wall.Seconds()/bounds.ArrivalBound.Seconds(), seconds(bounds.ArrivalBound), 100*r.usage(), 100*bounds.UsageCeiling(), r.work, r.occupied, r.interrupted, r.lost,
		seconds(lag[0]), seconds(lag[1]), seconds(lag[2]), strings.Join(classes, "; "), r.cpuSeconds, r.peakMB) + r.activity + r.diagnosis
}

// reportScenario reports a system's figures over its rounds: the means of wall time, usage
// and CPU, the largest peak memory, and the average and p90 of each class's times over all
// its rounds' Jobs.
func reportScenario(b *testing.B, system string, rounds []scenarioResult, bounds ks.Bounds) {
	var wall, usage, cpu, peak, finished float64
	admit, run := map[string][]time.Duration{}, map[string][]time.Duration{}
	for _, r := range rounds {
		wall += r.wall.Seconds() / float64(len(rounds))
		usage += 100 * r.usage() / float64(len(rounds))
		cpu += r.cpuSeconds / float64(len(rounds))
		finished += 100 * float64(scenarioJobs()-r.unfinished) / float64(scenarioJobs()*len(rounds))
		peak = max(peak, r.peakMB)
		for c := range r.admit {
			admit[c] = append(admit[c], r.admit[c]...)
			run[c] = append(run[c], r.run[c]...)
		}
	}
	b.ReportMetric(wall, system+"-wall-s")
	b.ReportMetric(usage, system+"-usage-pct")
	b.ReportMetric(finished, system+"-finished-pct")
	b.ReportMetric(cpu, system+"-cpu-s")
	b.ReportMetric(peak, system+"-peak-MB")
	for _, c := range ks.Classes {
		b.ReportMetric(mean(admit[c.Name]).Seconds(), fmt.Sprintf("%s-%s-avg-admit-s", system, c.Name))
		b.ReportMetric(quantiles(admit[c.Name], []float64{0.9})[0].Seconds(), fmt.Sprintf("%s-%s-p90-admit-s", system, c.Name))
		b.ReportMetric(mean(run[c.Name]).Seconds(), fmt.Sprintf("%s-%s-avg-run-s", system, c.Name))
		b.ReportMetric(quantiles(run[c.Name], []float64{0.9})[0].Seconds(), fmt.Sprintf("%s-%s-p90-run-s", system, c.Name))
	}
	b.ReportMetric(wall/bounds.ArrivalBound.Seconds(), system+"-wall-x-arrival-bound")
	b.Logf("%s over %d rounds: wall %.1fs (%.2f× the bound %s, %.2f× the arrivals' %s), usage %.1f%% (at most %.1f%%), %.1f%% of the Jobs finished, scheduling CPU %.1fs a round, peak memory %.0f MB",
		systemName[system], len(rounds), wall, wall/bounds.WorkBound.Seconds(), seconds(bounds.WorkBound), wall/bounds.ArrivalBound.Seconds(), seconds(bounds.ArrivalBound),
		usage, 100*bounds.UsageCeiling(), finished, cpu, peak)
}

// or is t, or otherwise when it is zero.
func or(t, otherwise time.Time) time.Time {
	if t.IsZero() {
		return otherwise
	}
	return t
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// resetPeakMemory resets the processes' peak resident set (VmHWM) so that peakMemoryMB reads a
// round's peak rather than the process's lifetime's (Linux: "5" to /proc/pid/clear_refs).
func resetPeakMemory(b *testing.B, pids map[string]int) {
	b.Helper()
	for name, pid := range pids {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			b.Logf("peak memory of %s not reset (its figure is its lifetime's): %v", name, err)
		}
	}
}

// peakMemoryMB sums the processes' peak resident sets (VmHWM), in MB.
func peakMemoryMB(pids map[string]int) float64 {
	var kb int64
	for _, pid := range pids {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				var n int64
				fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &n)
				kb += n
			}
		}
	}
	return float64(kb) / 1e3
}
