package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// TestDryRunIsWhatTheSchedulerDoes: on the local control plane, the scheduler's dry run of a
// Job is compared with what the scheduler does once the same Job is created, in an unchanged
// cluster, for the four outcomes: free capacity, reclaim of borrowed GPUs (S17), preemption
// inside the project (S16), and waiting. The scheduler runs without the rest of Arbiter, on
// settings given by hand: one node of 4 GPUs; project "a" deserves them all, "b" nothing.
func TestDryRunIsWhatTheSchedulerDoes(t *testing.T) {
	t.Parallel()
	c := sharedCluster(t)
	sum := sha256.Sum256([]byte(t.Name()))
	id := hex.EncodeToString(sum[:])[:8]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, id: id, client: c.Client(), sched: "arbiter-" + id}
	pool := devcluster.Pool{Name: "p" + id, Nodes: 1, GPUs: 4}
	if err := devcluster.AddNodes(ctx, e.client, []devcluster.Pool{pool}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.client.CoreV1().Nodes().Delete(context.Background(), pool.NodeName(0), metav1.DeleteOptions{})
	})
	if err := devcluster.WaitNodesReady(ctx, e.client, []devcluster.Pool{pool}); err != nil {
		t.Fatal(err)
	}
	nsA, nsB := "a-"+id, "b-"+id
	for _, ns := range []string{nsA, nsB} {
		if _, err := e.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	}
	quota := func(deserved int64) map[string]scheduler.Quota {
		return map[string]scheduler.Quota{pool.Name: {Deserved: deserved, Limit: scheduler.NoLimit, OverQuotaWeight: 2}}
	}
	settings := &kube.Settings{
		Priorities:    []scheduler.Priority{{Name: "low", Value: 40}, {Name: "high", Value: 125}},
		WorkloadTypes: []scheduler.WorkloadType{{Name: "Job", Group: "batch"}},
		NodePools:     []scheduler.NodePool{{Name: pool.Name, LabelKey: devcluster.LabelNodePool, LabelValue: pool.Name}},
		Projects: []scheduler.Project{{Name: "a", Quotas: quota(4), NodePools: []string{pool.Name}},
			{Name: "b", Quotas: quota(0), NodePools: []string{pool.Name}}},
		NamespaceProject: map[string]string{nsA: "a", nsB: "b"},
	}
	sched, err := kube.New(kube.Options{SchedulerName: e.sched, Config: c.RESTConfig(),
		LoadSettings: func(context.Context) (*kube.Settings, error) { return settings, nil },
		Log:          slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = sched.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })
	e.eventually("the scheduler runs its first cycle", 2*time.Minute, func() bool { return sched.Last() != nil })

	job := func(name, ns, priority string) *objects.JobWrapper {
		return objects.Job(name, ns).Pods(1).GPUs(2).CPU("1").SchedulerName(e.sched).
			Labels(labels(priority, "preemptible"))
	}
	// foresee dry-runs the Job, creates it, and returns the prediction.
	foresee := func(t *testing.T, w *objects.JobWrapper) scheduler.Prediction {
		t.Helper()
		p, err := sched.Workloads().DryRun(ctx, w.Obj(), scheduler.EstimateInput{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.client.BatchV1().Jobs(w.Obj().Namespace).Create(ctx, w.Obj(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	podOf := func(t *testing.T, ns, name string) corev1.Pod {
		t.Helper()
		var pod corev1.Pod
		poll.Until(t, name+" has its pod", time.Minute, func() bool {
			pods := e.jobPods(ns, name)
			if len(pods) == 1 {
				pod = pods[0]
			}
			return len(pods) == 1
		})
		return pod
	}
	runsOnPredictedNodes := func(t *testing.T, ns, name string, p scheduler.Prediction) {
		t.Helper()
		poll.Until(t, name+" runs", time.Minute, func() bool { return e.running(ns, name) == 1 })
		if node := e.jobPods(ns, name)[0].Spec.NodeName; !slices.Equal(p.Nodes, []string{node}) || p.NodePool != pool.Name {
			t.Errorf("%s runs on %s in pool %s; the dry run said %v in %q", name, node, pool.Name, p.Nodes, p.NodePool)
		}
	}
	evicted := func(t *testing.T, pod corev1.Pod) {
		t.Helper()
		poll.Until(t, pod.Name+" is evicted", time.Minute, func() bool {
			got, err := e.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			return err != nil || got.UID != pod.UID || got.DeletionTimestamp != nil
		})
	}
	victims := func(p scheduler.Prediction) []string {
		var out []string
		for _, v := range p.Victims {
			out = append(out, v.Namespace+"/"+v.Name+" "+string(v.Rule))
		}
		return out
	}

	// The pods of the first Jobs, the victims of the later steps.
	var aLow, bBorrow corev1.Pod
	if !t.Run("with free capacity Jobs start now where the dry run said", func(t *testing.T) {
		// Free capacity: a-low starts now, where the dry run said.
		p := foresee(t, job("a-low", nsA, "low"))
		if p.Outcome != scheduler.StartNow {
			t.Fatalf("a-low: %+v, want start-now", p)
		}
		runsOnPredictedNodes(t, nsA, "a-low", p)
		aLow = podOf(t, nsA, "a-low")
		p = foresee(t, job("b-borrow", nsB, "low"))
		if p.Outcome != scheduler.StartNow {
			t.Fatalf("b-borrow: %+v, want start-now", p)
		}
		runsOnPredictedNodes(t, nsB, "b-borrow", p)
		bBorrow = podOf(t, nsB, "b-borrow")
	}) {
		return
	}

	if !t.Run("a project within its deserved quota reclaims what another borrows, as the dry run said", func(t *testing.T) {
		// Reclaim: a is within its deserved quota and takes back what b borrows.
		p := foresee(t, job("a-claim", nsA, "low"))
		if p.Outcome != scheduler.StartAfterReclaim || !slices.Equal(victims(p), []string{nsB + "/b-borrow S17"}) {
			t.Fatalf("a-claim: %+v, want start-after-reclaim of b-borrow", p)
		}
		evicted(t, bBorrow)
		runsOnPredictedNodes(t, nsA, "a-claim", p)
	}) {
		return
	}

	if !t.Run("a high-priority Job preempts the victim the dry run named", func(t *testing.T) {
		// Preemption: a is at its deserved quota; a high-priority Job of a preempts one of its two
		// low-priority ones (the oldest; started within the same second on a fast machine, they
		// tie, so which is not fixed here), and the one the dry run names is the one evicted.
		aClaim := podOf(t, nsA, "a-claim")
		p := foresee(t, job("a-urgent", nsA, "high"))
		named := victims(p)
		if p.Outcome != scheduler.StartAfterPreemption || len(named) != 1 ||
			named[0] != nsA+"/a-low S16" && named[0] != nsA+"/a-claim S16" {
			t.Fatalf("a-urgent: %+v, want start-after-preemption of a-low or a-claim", p)
		}
		victim, spared := aLow, aClaim
		if named[0] == nsA+"/a-claim S16" {
			victim, spared = aClaim, aLow
		}
		evicted(t, victim)
		runsOnPredictedNodes(t, nsA, "a-urgent", p)
		if got, err := e.client.CoreV1().Pods(nsA).Get(ctx, spared.Name, metav1.GetOptions{}); err != nil || got.DeletionTimestamp != nil {
			t.Errorf("%s was evicted too (%v); the dry run named only %s", spared.Name, err, victim.Name)
		}
	}) {
		return
	}

	t.Run("with nothing to preempt or reclaim a Job waits for the reason the dry run gave", func(t *testing.T) {
		// Waiting: nothing lower to preempt, nothing borrowed to reclaim.
		p := foresee(t, job("a-wait", nsA, "low"))
		if p.Outcome != scheduler.Wait || p.Reason != scheduler.InsufficientCapacity {
			t.Fatalf("a-wait: %+v, want wait for InsufficientCapacity", p)
		}
		poll.Until(t, "a-wait waits with the predicted reason", time.Minute, func() bool {
			reason, _ := e.pendingReason(nsA, "a-wait")
			return reason == string(p.Reason)
		})
		if e.running(nsA, "a-wait") != 0 {
			t.Errorf("a-wait runs; the dry run said it waits")
		}
	})
}
