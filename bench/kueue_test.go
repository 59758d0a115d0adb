package bench

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/scheduler"
)

// Reclaim and preemption against Kueue, the queueing system most teams run next to
// kube-scheduler: Kueue admits (unsuspends) Jobs and kube-scheduler binds their pods. The
// mapping: a department is a Cohort (holding the department's quota that no project deserves),
// a project a ClusterQueue in it with nominal quota = deserved and no borrowing limit (the
// projects' limit is unlimited), a namespace's LocalQueue points at its project's ClusterQueue;
// preemption: reclaimWithinCohort Any (an owner takes back what others borrowed, whatever their
// priority) and withinClusterQueue LowerPriority (Arbiter's in-project preemption of a
// preemptible lower priority).
//
// The reclaim case has the reclaim benchmark's size: 4,000 borrowed Jobs on 500 nodes.
const (
	peerNodes      = benchNodes // × benchGPUs = 4,000 GPUs, all borrowed in the reclaim case
	peerGPUs       = peerNodes * benchGPUs
	peerSamples    = 100 // submissions per round, one at a time; 200 per system over two rounds, whose p99 is the third largest
	peerOwnerQuota = 128 // the owner's deserved GPUs in the reclaim case: more than a round's submissions, which all keep running
	peerTeamQuota  = 128 // the project's quota and limit in the preemption case, filled with low-priority Jobs (one preempted per submission)
)

var (
	kueueFlavors       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}
	kueueCohorts       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "cohorts"}
	kueueClusterQueues = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	kueueLocalQueues   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
	kueuePriorities    = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloadpriorityclasses"}
	kueueWorkloads     = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
)

// kueuePriorityLabel names a Job's WorkloadPriorityClass.
const kueuePriorityLabel = "kueue.x-k8s.io/priority-class"

// peerCase is one scenario run by both systems: fill Jobs in fillNS take the GPUs, then
// submissions in submitNS, one at a time, must each displace one of them.
type peerCase struct {
	name             string
	fill             int
	fillNS, submitNS map[string]string // by system
	fillJob          func(name, ns, system string) *batchv1.Job
	submitJob        func(name, ns, system string) *batchv1.Job
	// keepFill keeps the fill from one round to the next of the same system (Kueue's two),
	// deleting only the submissions and waiting until the fill runs whole again; the fill
	// must have a namespace of its own.
	keepFill bool
}

const (
	systemArbiter = "arbiter"
	systemKueue   = "kueue"
)

var systemName = map[string]string{systemArbiter: "Arbiter", systemKueue: "Kueue + kube-scheduler"}

// peerRounds is the order of a comparison's rounds: Arbiter, Kueue, Kueue, Arbiter, each
// from a clean state.
func peerRounds() []string {
	return benchRounds(systemArbiter, systemKueue, systemKueue, systemArbiter)
}

// benchRounds is a comparison's rounds in order. ARBITER_BENCH_ONLY=arbiter (or kueue, or
// default-scheduler for kube-scheduler) keeps one system's rounds, to try a change without
// the other's minutes; make bench runs both, and a figure that compares them is reported
// only then.
func benchRounds(order ...string) []string {
	if only := os.Getenv("ARBITER_BENCH_ONLY"); only != "" {
		return slices.DeleteFunc(order, func(s string) bool { return s != only })
	}
	return order
}

// peerJob is a one-GPU Job for system: Arbiter's pods name it as their scheduler; Kueue's are
// kube-scheduler's, in LocalQueue queue with a WorkloadPriorityClass, created unsuspended as a
// user writes it (Kueue's Job webhook suspends it).
func peerJob(name, ns, system, queue, priority string, preemptible bool) *batchv1.Job {
	if system == systemArbiter {
		labels := map[string]string{scheduler.LabelPriority: priority}
		if preemptible {
			labels[scheduler.LabelPreemptibility] = string(scheduler.Preemptible)
		}
		return oneGPUJob(name, ns, "arbiter", labels)
	}
	return oneGPUJob(name, ns, corev1.DefaultSchedulerName, map[string]string{devcluster.KueueQueueNameLabel: queue, kueuePriorityLabel: priority})
}

// createJob creates job for system. Kueue's Jobs are created unsuspended, as users write them:
// one stored unsuspended means Kueue's Job webhook did not run, and its Job would start
// without Kueue, so the benchmark stops rather than time it.
func (cb *clusterBench) createJob(system string, job *batchv1.Job) error {
	made, err := cb.client.BatchV1().Jobs(job.Namespace).Create(cb.ctx, job, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if system == systemKueue && (made.Spec.Suspend == nil || !*made.Spec.Suspend) {
		return fmt.Errorf("job %s/%s was stored unsuspended: Kueue's Job webhook did not suspend it", job.Namespace, job.Name)
	}
	return nil
}

// BenchmarkPeerKueue: reclaim and preemption inside a project, Arbiter against Kueue +
// kube-scheduler, time from a Job's submission to its pod Running, p50/p99. Reclaim: a project
// with no deserved quota borrows every GPU with preemptible low-priority Jobs, then the owner of
// peerOwnerQuota GPUs submits one-GPU Jobs one at a time. Preemption: a project fills its
// quota (= its limit) with preemptible low-priority Jobs, then submits high-priority ones one at
// a time. Rounds go Arbiter, Kueue, Kueue, Arbiter, each from a clean state (no Job, pod or
// Workload left). Both cases share one cluster. Run with -benchtime=1x.
func BenchmarkPeerKueue(b *testing.B) {
	cb := startCluster(b, peerNodes, true, devcluster.OperatorKueue)
	cb.arbiter = startArbiter(b, cb.dbURL, cb.cluster.Kubeconfig())
	dyn, err := dynamic.NewForConfig(cb.cluster.RESTConfig())
	if err != nil {
		b.Fatal(err)
	}
	cases := []peerCase{
		{
			name: "reclaim", fill: peerGPUs, keepFill: true,
			fillNS:   map[string]string{systemArbiter: cb.project("a-borrower", 0), systemKueue: "k-borrower"},
			submitNS: map[string]string{systemArbiter: cb.project("a-owner", peerOwnerQuota), systemKueue: "k-owner"},
			fillJob: func(name, ns, system string) *batchv1.Job {
				return peerJob(name, ns, system, "borrower", "low", true)
			},
			submitJob: func(name, ns, system string) *batchv1.Job {
				return peerJob(name, ns, system, "owner", "low", true)
			},
		},
		{
			name: "preemption", fill: peerTeamQuota,
			fillNS:   map[string]string{systemArbiter: cb.projectWithLimit("a-team", peerTeamQuota, peerTeamQuota), systemKueue: "k-team"},
			submitNS: map[string]string{systemArbiter: "a-team", systemKueue: "k-team"},
			fillJob: func(name, ns, system string) *batchv1.Job {
				return peerJob(name, ns, system, "team", "low", true)
			},
			submitJob: func(name, ns, system string) *batchv1.Job {
				return peerJob(name, ns, system, "team", "high", false)
			},
		},
	}
	for _, ns := range []string{"k-borrower", "k-owner", "k-team"} {
		if _, err := cb.client.CoreV1().Namespaces().Create(cb.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	setUpKueue(b, cb, dyn)
	trace := startKueueTrace(cb, dyn, "k-borrower", "k-owner", "k-team")
	for _, pc := range cases {
		b.Run(pc.name, func(b *testing.B) {
			parent := cb.b
			cb.b = b
			defer func() { cb.b = parent }()
			for b.Loop() {
				cb.peerCompare(dyn, trace, pc)
			}
		})
	}
}

// peerCompare runs pc's four rounds, Arbiter, Kueue, Kueue, Arbiter, and reports each
// system's p50, p99 and maximum over its two rounds, and Arbiter's p99 ÷ Kueue's.
func (cb *clusterBench) peerCompare(dyn dynamic.Interface, trace *kueueTrace, pc peerCase) {
	b := cb.b
	latencies := map[string][]time.Duration{}
	order := peerRounds()
	fillPrefix := ""
	for round, system := range order {
		prefix := fmt.Sprintf("r%d", round)
		fresh := round == 0 || order[round-1] != system || !pc.keepFill
		if fresh {
			fillPrefix = prefix
		}
		keep := pc.keepFill && round+1 < len(order) && order[round+1] == system
		l := cb.peerRound(dyn, trace, pc, system, prefix, fillPrefix, fresh, keep)
		latencies[system] = append(latencies[system], l...)
		q := quantiles(l, []float64{0.5, 0.99, 1})
		b.Logf("%s, round %d, %s: %d submissions, submitted→Running p50 %s p99 %s max %s", pc.name, round+1, systemName[system], len(l),
			q[0].Round(time.Millisecond), q[1].Round(time.Millisecond), q[2].Round(time.Millisecond))
	}
	q := map[string][]time.Duration{} // p50, p99, max of each system that ran
	for _, system := range []string{systemArbiter, systemKueue} {
		if len(latencies[system]) == 0 {
			continue
		}
		q[system] = quantiles(latencies[system], []float64{0.5, 0.99, 1})
		for i, name := range []string{"p50", "p99", "max"} {
			b.ReportMetric(q[system][i].Seconds(), system+"-"+name+"-s")
		}
	}
	a, k := q[systemArbiter], q[systemKueue]
	if a == nil || k == nil {
		return // one system's rounds only (benchRounds): nothing to compare
	}
	b.ReportMetric(a[1].Seconds()/k[1].Seconds(), "p99-ratio-x")
	b.Logf("%s over %d submissions each: Arbiter p50 %s p99 %s max %s; Kueue + kube-scheduler p50 %s p99 %s max %s; Arbiter's p99 / Kueue's %.3f",
		pc.name, len(latencies[systemArbiter]), a[0].Round(time.Millisecond), a[1].Round(time.Millisecond), a[2].Round(time.Millisecond),
		k[0].Round(time.Millisecond), k[1].Round(time.Millisecond), k[2].Round(time.Millisecond), a[1].Seconds()/k[1].Seconds())
}

// setUpKueue creates the Kueue side of both cases: a ResourceFlavor; for the reclaim case a
// Cohort "bench" (the department) holding the GPUs no project deserves, with ClusterQueues
// "borrower" (nominal 0) and "owner" (nominal peerOwnerQuota) in it; for the preemption case a
// ClusterQueue "team" of nominal peerTeamQuota outside any cohort (so that its limit is its
// quota); the LocalQueues of the namespaces; WorkloadPriorityClasses low and high.
func setUpKueue(b *testing.B, cb *clusterBench, dyn dynamic.Interface) {
	b.Helper()
	cq := func(name, cohort string, nominal int) string {
		s := fmt.Sprintf(`
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s}
spec:
  namespaceSelector: {}
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: bench
      resources:
      - {name: nvidia.com/gpu, nominalQuota: %d}
`, name, nominal)
		if cohort != "" {
			s += "  cohortName: " + cohort + "\n"
		}
		return s
	}
	objects := []struct {
		gvr       schema.GroupVersionResource
		namespace string
		manifest  string
	}{
		{kueueFlavors, "", `{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: bench}}`},
		{kueuePriorities, "", `{apiVersion: kueue.x-k8s.io/v1beta2, kind: WorkloadPriorityClass, metadata: {name: low}, value: 100}`},
		{kueuePriorities, "", `{apiVersion: kueue.x-k8s.io/v1beta2, kind: WorkloadPriorityClass, metadata: {name: high}, value: 10000}`},
		{kueueCohorts, "", fmt.Sprintf(`
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: bench}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: bench
      resources:
      - {name: nvidia.com/gpu, nominalQuota: %d}
`, peerGPUs-peerOwnerQuota)},
		{kueueClusterQueues, "", cq("borrower", "bench", 0)},
		{kueueClusterQueues, "", cq("owner", "bench", peerOwnerQuota)},
		{kueueClusterQueues, "", cq("team", "", peerTeamQuota)},
		{kueueLocalQueues, "k-borrower", `{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: borrower}, spec: {clusterQueue: borrower}}`},
		{kueueLocalQueues, "k-owner", `{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: owner}, spec: {clusterQueue: owner}}`},
		{kueueLocalQueues, "k-team", `{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: team}, spec: {clusterQueue: team}}`},
	}
	for _, o := range objects {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(o.manifest), &obj); err != nil {
			b.Fatal(err)
		}
		if _, err := dyn.Resource(o.gvr).Namespace(o.namespace).Create(cb.ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			b.Fatalf("creating a Kueue %s: %v", o.gvr.Resource, err)
		}
	}
}
