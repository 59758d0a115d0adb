package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// The backlog benchmark isolates the scheduler: in the fill, pods arrive as fast as the Job
// controller makes them and both schedulers keep up. Here every pod exists before the
// scheduler starts (as after a failover, when a new leader finds a backlog), so the time
// until all are bound is the scheduler's: its start, its first sync of 10,000 pods, its
// decisions and its binds.
const (
	backlogNodes = 1250 // × benchGPUs: exactly one GPU per pod
	backlogPods  = 10000
	backlogJobs  = backlogPods / 2 // one pod each; the rest are bare pods
)

// BenchmarkBacklog: 10,000 one-GPU pods (5,000 bare pods, 5,000 Jobs' pods) created while
// no scheduler runs, on 1,250 kwok nodes × 8 GPUs; then, once the control plane is quiet
// (waitQuiet), the scheduler starts, and the round lasts until all are bound (target:
// Arbiter's pods/s ≥ 3 × kube-scheduler's). Rounds go Arbiter, kube-scheduler,
// kube-scheduler, Arbiter, so that neither gains from its place, each
// on a control plane of its own: a clean state in 10 s, where deleting a round's 15,000 Jobs
// and pods took 100 s. Run with -benchtime=1x.
func BenchmarkBacklog(b *testing.B) {
	bins, err := devcluster.EnsureBinaries(b.Context(), os.Stderr, devcluster.KubeScheduler)
	if err != nil {
		b.Fatal(err)
	}
	arbiterBin, arbiterLog := buildArbiter(b), ""
	name := map[string]string{"arbiter": "Arbiter", corev1.DefaultSchedulerName: "kube-scheduler"}
	start := map[string]func(cb *clusterBench) *schedulerProcess{
		"arbiter": func(cb *clusterBench) *schedulerProcess {
			dir := b.TempDir()
			arbiterLog = filepath.Join(dir, "arbiter.log")
			return runArbiter(b, arbiterBin, dir, cb.dbURL, cb.cluster.Kubeconfig(), "--log-level", "info")
		},
		corev1.DefaultSchedulerName: func(cb *clusterBench) *schedulerProcess {
			return runKubeScheduler(b, bins.Path(devcluster.KubeScheduler), cb.cluster.Dir())
		},
	}
	for b.Loop() {
		took, first := map[string]time.Duration{}, map[string]time.Duration{}
		for round, scheduler := range benchRounds("arbiter", corev1.DefaultSchedulerName, corev1.DefaultSchedulerName, "arbiter") {
			cb := startCluster(b, backlogNodes, false)
			deserved := 0 // kube-scheduler's pods are in no project Arbiter schedules
			if scheduler == "arbiter" {
				deserved = backlogNodes * benchGPUs
			}
			ns := cb.project("backlog", deserved)
			d, firstBind, summary := cb.backlog(ns, fmt.Sprintf("b%d", round), scheduler, func() *schedulerProcess { return start[scheduler](cb) })
			cb.stop()
			took[scheduler] += d
			first[scheduler] += firstBind
			b.Logf("round %d, %s: %s", round+1, name[scheduler], summary)
			if scheduler == "arbiter" {
				b.Logf("round %d, Arbiter's start-up as it logged it:\n%s", round+1, startupLines(arbiterLog))
			}
		}
		if took["arbiter"] == 0 || took[corev1.DefaultSchedulerName] == 0 {
			continue // one system's rounds only (benchRounds): nothing to compare
		}
		arbiter, kube := took["arbiter"]/2, took[corev1.DefaultSchedulerName]/2
		// From the scheduler's start (its process started) to its first bind: start-up, the
		// first lists of 10,000 pods, the first decision (docs/performance.md "Start-up and failover").
		b.ReportMetric((first["arbiter"] / 2).Seconds(), "arbiter-first-bind-s")
		b.ReportMetric((first[corev1.DefaultSchedulerName] / 2).Seconds(), "kube-scheduler-first-bind-s")
		b.ReportMetric(float64(backlogPods)/arbiter.Seconds(), "arbiter-pods/s")
		b.ReportMetric(float64(backlogPods)/kube.Seconds(), "kube-scheduler-pods/s")
		b.ReportMetric(kube.Seconds()/arbiter.Seconds(), "speedup-x")
		b.Logf("mean of two rounds each: Arbiter %s (%.0f pods/s), kube-scheduler %s (%.0f pods/s); Arbiter/kube-scheduler pods/s %.2f; first bind: Arbiter %s, kube-scheduler %s",
			arbiter.Round(time.Millisecond), float64(backlogPods)/arbiter.Seconds(), kube.Round(time.Millisecond),
			float64(backlogPods)/kube.Seconds(), kube.Seconds()/arbiter.Seconds(),
			(first["arbiter"] / 2).Round(time.Millisecond), (first[corev1.DefaultSchedulerName] / 2).Round(time.Millisecond))
	}
}

// backlog creates the round's pods with no scheduler running, starts the scheduler, and
// returns the time from its start until every pod is bound and until the first was, with a
// summary; then it stops the scheduler (the round's control plane goes with its objects).
func (cb *clusterBench) backlog(ns, prefix, schedulerName string, startScheduler func() *schedulerProcess) (all, first time.Duration, summary string) {
	b := cb.b
	b.Helper()
	cb.podsMu.Lock()
	cb.seenIn[ns], cb.boundIn[ns] = 0, 0
	cb.podsMu.Unlock()
	created := time.Now()
	cb.createJobs(ns, prefix+"-job", schedulerName, backlogJobs, nil)
	pod := oneGPUJob("", ns, schedulerName, nil).Spec.Template
	failed := concurrently(backlogPods-backlogJobs, func(i int) error {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-pod-%d", prefix, i), Namespace: ns}, Spec: *pod.Spec.DeepCopy()}
		_, err := cb.client.CoreV1().Pods(ns).Create(cb.ctx, p, metav1.CreateOptions{})
		return err
	})
	if failed > 0 {
		b.Fatalf("%d pod creations failed", failed)
	}
	// the Job controller makes the Jobs' pods
	if !cb.waitCount(cb.seenIn, ns, backlogPods, 10*time.Minute) {
		b.Fatalf("only %d of %d pods exist after %s", cb.count(cb.seenIn, ns), backlogPods, time.Since(created))
	}
	if n := cb.count(cb.boundIn, ns); n > 0 {
		b.Fatalf("%d pods bound with no scheduler running", n)
	}
	backlogReady := time.Since(created)
	// The scheduler starts on a settled backlog, as a new leader finds one: the control plane
	// has stored what the Job controller writes about the Jobs' new pods.
	settled, quiet := waitQuiet(cb.pids(), time.Minute)
	if !quiet {
		b.Logf("the control plane was still busy %s after the backlog was ready; the scheduler starts anyway", settled.Round(time.Second))
	}

	cpu, reqs := cb.readCPU(), readRequests(cb.ctx, cb.client)
	start := time.Now()
	proc := startScheduler()
	pids := cb.pids()
	pids[schedulerName] = proc.pid
	if !cb.waitCount(cb.boundIn, ns, backlogPods, 10*time.Minute) {
		b.Fatalf("%s: only %d of %d pods bound after %s", schedulerName, cb.count(cb.boundIn, ns), backlogPods, time.Since(start))
	}
	// When the watch saw the first bind: Arbiter's process may bind before it says it serves,
	// which is when startScheduler returns.
	cb.podsMu.Lock()
	first = cb.firstBoundIn[ns].Sub(start)
	cb.podsMu.Unlock()
	took := time.Since(start)
	used := readCPU(pids).since(cpu)
	served := readRequests(cb.ctx, cb.client).since(reqs)
	proc.Stop()
	summary = fmt.Sprintf("backlog of %d pods ready %s after the first create, the control plane quiet %s later; scheduler started → first bind %s, all %d bound after %s (%.0f pods/s; %.0f pods/s after the first bind); %s; %s",
		backlogPods, backlogReady.Round(time.Second), settled.Round(100*time.Millisecond), first.Round(time.Millisecond), backlogPods, took.Round(time.Millisecond),
		float64(backlogPods)/took.Seconds(), float64(backlogPods)/(took-first).Seconds(), used, served)
	return took, first, summary
}

func (cb *clusterBench) count(m map[string]int, ns string) int {
	cb.podsMu.Lock()
	defer cb.podsMu.Unlock()
	return m[ns]
}

func (cb *clusterBench) waitCount(m map[string]int, ns string, target int, timeout time.Duration) bool {
	return poll.Within(timeout, func() bool { return cb.count(m, ns) >= target })
}

// startupLines are the lines of an Arbiter log that time its start-up (server/serve.go,
// scheduler/kube/scheduler.go): where the time to its first bind went.
func startupLines(path string) string {
	out, _ := os.ReadFile(path)
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		for _, msg := range []string{"database ready", "scheduler informers synced", "took over from the cluster", "waiting times taken from the workload records", "first cycle of the term", "Arbiter is serving", "garbage collector's start-up hold ended"} {
			if strings.Contains(l, `msg="`+msg+`"`) {
				lines = append(lines, l)
			}
		}
	}
	return strings.Join(lines, "\n")
}
