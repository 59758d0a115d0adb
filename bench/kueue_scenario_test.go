package bench

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	ks "github.com/arbiterhq/arbiter/internal/testkit/kueuescenario"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// Kueue's published scalability scenario (internal/testkit/kueuescenario: its classes, its
// scaling and its bounds) end to end, with real Jobs and pods, for Arbiter and for Kueue +
// kube-scheduler on one control plane and the same kwok nodes. docs/performance.md lists every
// place the mapping is not exact.
const (
	// scenarioCutOff × the bound is as long as a round may take (so that make bench keeps its
	// hour whatever a system does); a round cut off says so and reports what it did by then.
	scenarioCutOff = 3
	// scenarioRoundLabel marks a round's Jobs and pods, which the round's watches select.
	scenarioRoundLabel = "arbiter.dev/bench-round"
)

// scenarioBench is the scenario's cluster: the cluster benchmark's, its queues, a dynamic
// client for Kueue's objects, and where Arbiter logs.
type scenarioBench struct {
	*clusterBench
	queues     []scenarioQueue
	dyn        dynamic.Interface
	arbiterLog string
}

// scenarioQueue is one ClusterQueue / project: its namespace for each system.
type scenarioQueue struct {
	cohort, queue int
	ns            map[string]string // by system
}

func (q scenarioQueue) name() string { return fmt.Sprintf("c%d-q%d", q.cohort, q.queue) }

// BenchmarkKueueScenario runs Kueue's scenario (above) four times, Arbiter, Kueue, Kueue,
// Arbiter, each from a clean state, and reports for each system its wall time from the first
// create to the last Job complete against the bound, the usage of the GPUs over that time, the
// time to admission and to Running of each class (average and p90), and the CPU and peak memory
// of its scheduling (Kueue's: Kueue and kube-scheduler). Run with -benchtime=1x.
func BenchmarkKueueScenario(b *testing.B) {
	sb := startScenarioCluster(b)
	sb.setUpKueue()
	bounds := ks.Bound()
	b.Logf("scenario scaled by %d: %d Jobs a round, %.0f GPU-seconds asked on %d GPUs (%d nodes × %d): bound %s (the work over the GPUs); with the arrivals %s from the first create (usage at most %.1f%%); the last arrival plus its runtime %s",
		ks.Factor, scenarioJobs(), bounds.Work, ks.GPUs, ks.Nodes, ks.NodeGPUs, bounds.WorkBound, bounds.ArrivalBound, 100*bounds.UsageCeiling(), bounds.LastEnd)
	for b.Loop() {
		results := map[string][]scenarioResult{}
		for round, system := range peerRounds() {
			r := sb.round(system, fmt.Sprintf("r%d", round))
			results[system] = append(results[system], r)
			b.Logf("round %d, %s: %s", round+1, systemName[system], r.summary(bounds))
		}
		b.ReportMetric(bounds.WorkBound.Seconds(), "bound-s")
		b.ReportMetric(bounds.ArrivalBound.Seconds(), "arrival-bound-s")
		b.ReportMetric(100*bounds.UsageCeiling(), "usage-ceiling-pct")
		for _, system := range []string{systemArbiter, systemKueue} {
			if len(results[system]) == 0 {
				continue
			}
			reportScenario(b, system, results[system], bounds)
		}
	}
}

// scenarioJobs is the number of Jobs in a round.
func scenarioJobs() int {
	n := 0
	for _, c := range ks.Classes {
		count, _, _ := c.Scaled()
		n += count
	}
	return n * ks.Cohorts * ks.Queues
}

// startScenarioCluster starts a local control plane with kube-scheduler, Kueue and
// ks.Nodes kwok nodes of ks.NodeGPUs GPUs in one node pool, and Arbiter; a
// department for each cohort (its quota and limit the sum of its projects' quotas, so that
// they borrow only from each other, as a cohort's queues do) and a project for each
// ClusterQueue, its limit its quota plus Kueue's borrowing limit. It is startCluster's start
// with other node sizes and no department of all the GPUs.
func startScenarioCluster(b *testing.B) *scenarioBench {
	b.Helper()
	cb := startControlPlane(b, ks.Nodes, ks.NodeGPUs, true, devcluster.OperatorKueue)
	ctx, c, client, actor, opt := cb.ctx, cb.cluster, cb.client, benchActor, optional
	var queues []scenarioQueue
	for ci := range ks.Cohorts {
		quota := ks.CohortQuota
		dept, err := cb.st.CreateDepartment(ctx, store.DepartmentUpdate{Name: opt(fmt.Sprintf("c%d", ci)),
			Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &[]store.QuotaInput{{NodePoolID: &cb.pool.ID, Deserved: quota, Limit: &quota}}}}, actor)
		if err != nil {
			b.Fatal(err)
		}
		for qi := range ks.Queues {
			q := scenarioQueue{cohort: ci, queue: qi}
			q.ns = map[string]string{systemArbiter: "a-" + q.name(), systemKueue: "k-" + q.name()}
			for _, ns := range q.ns {
				if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			limit := ks.Nominal + ks.Borrow
			if _, err := cb.st.CreateProject(ctx, store.ProjectUpdate{
				Name: opt(q.ns[systemArbiter]), DepartmentID: store.Optional[uuid.UUID]{Set: true, Value: &dept.ID},
				Namespaces: store.Optional[[]string]{Set: true, Value: &[]string{q.ns[systemArbiter]}},
				NodePools:  store.Optional[[]uuid.UUID]{Set: true, Value: &[]uuid.UUID{cb.pool.ID}},
				Resources:  store.Optional[[]store.QuotaInput]{Set: true, Value: &[]store.QuotaInput{{NodePoolID: &cb.pool.ID, Deserved: ks.Nominal, Limit: &limit}}},
				// Kueue preempts, among victims of equal priority, the most recently admitted
				// first (CandidatesOrdering in pkg/scheduler/preemption/common); Arbiter's
				// default is the oldest started, which loses the most work. And Kueue orders a
				// cohort's borrowing workloads by priority across its ClusterQueues
				// (classicalIterator in pkg/scheduler/scheduler.go, PrioritySortingWithinCohort
				// on by default): S25's open projects, whose over-quota order is their queues'
				// priority; Arbiter's default fences priority inside each project.
				Policy: store.PolicyUpdate{PreemptionOrder: opt(store.PreemptNewest), PriorityPolicy: opt(store.PriorityOpen)},
			}, actor); err != nil {
				b.Fatal(err)
			}
			queues = append(queues, q)
		}
	}
	sb := &scenarioBench{clusterBench: cb, queues: queues}
	var err error
	if sb.dyn, err = dynamic.NewForConfig(c.RESTConfig()); err != nil {
		b.Fatal(err)
	}
	arbiterDir := b.TempDir()
	sb.arbiterLog = filepath.Join(arbiterDir, "arbiter.log")
	cb.arbiter = runArbiter(b, buildArbiter(b), arbiterDir, cb.dbURL, c.Kubeconfig())
	return sb
}

// setUpKueue creates Kueue's side as its runner's generator does: a ResourceFlavor, a
// ClusterQueue per queue in its cohort (nominal quota, borrowing limit, preemption), a
// LocalQueue in each of its namespaces, and a WorkloadPriorityClass per class.
func (sb *scenarioBench) setUpKueue() {
	b := sb.b
	b.Helper()
	create := func(gvr schema.GroupVersionResource, namespace, manifest string) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
			b.Fatal(err)
		}
		if _, err := sb.dyn.Resource(gvr).Namespace(namespace).Create(sb.ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			b.Fatalf("creating a Kueue %s: %v", gvr.Resource, err)
		}
	}
	create(kueueFlavors, "", `{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: scenario}}`)
	for _, c := range ks.Classes {
		create(kueuePriorities, "", fmt.Sprintf(`{apiVersion: kueue.x-k8s.io/v1beta2, kind: WorkloadPriorityClass, metadata: {name: %s}, value: %d}`, c.Name, c.KueuePriority))
	}
	for _, q := range sb.queues {
		create(kueueClusterQueues, "", fmt.Sprintf(`
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s}
spec:
  cohortName: c%d
  namespaceSelector: {}
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: scenario
      resources:
      - {name: nvidia.com/gpu, nominalQuota: %d, borrowingLimit: %d}
`, q.name(), q.cohort, ks.Nominal, ks.Borrow))
		create(kueueLocalQueues, q.ns[systemKueue], fmt.Sprintf(`{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: %s}, spec: {clusterQueue: %s}}`, q.name(), q.name()))
	}
}

// scenarioJob is the i-th Job of class c in queue q for system, marked with the round: for
// Arbiter its pods name it as their scheduler, with the class's priority, preemptible (as
// every workload of Kueue's scenario is); for Kueue it is in the queue's LocalQueue with the
// class's WorkloadPriorityClass, created unsuspended as a user writes it (Kueue's Job webhook
// suspends it).
func scenarioJob(system, round string, q scenarioQueue, c ks.Class, i int) *batchv1.Job {
	_, _, run := c.Scaled()
	j := objects.Job(fmt.Sprintf("%s-%d", c.Name, i), q.ns[system]).GPUs(c.GPUs).BackoffLimit(6).
		Label(scenarioRoundLabel, round).PodLabel(scenarioRoundLabel, round).
		PodAnnotation(devcluster.AnnotationRunSeconds, fmt.Sprint(run))
	if system == systemArbiter {
		return j.SchedulerName("arbiter").Priority(c.ArbiterPriority).Preemptible().Obj()
	}
	return j.SchedulerName(corev1.DefaultSchedulerName).Label(devcluster.KueueQueueNameLabel, q.name()).Label(kueuePriorityLabel, c.Name).Obj()
}

// round runs the scenario once for system from a clean state and cleans up after it:
// every Job, pod and Workload of the round deleted and waited for, and the round's events.
func (sb *scenarioBench) round(system, round string) scenarioResult {
	cb := sb.clusterBench
	b := cb.b
	b.Helper()
	pids := cb.schedulerPIDs(system)
	resetPeakMemory(b, pids)
	cohortOf := map[string]string{}
	for _, q := range sb.queues {
		cohortOf[q.ns[system]] = fmt.Sprintf("c%d", q.cohort)
	}
	w := startScenarioWatch(b, cb.ctx, cb.client, round, system == systemKueue, cohortOf)
	var counters map[string]float64
	if system == systemArbiter {
		counters = arbiterCounters(cb.ctx, cb.arbiter.url)
	}
	cpu, machine := readCPU(pids), cb.readCPU()
	start := time.Now()
	var wg sync.WaitGroup
	var failed sync.Map
	for _, q := range sb.queues {
		for _, c := range ks.Classes {
			count, interval, run := c.Scaled()
			wg.Go(func() {
				// Kueue's generator sleeps the interval before each creation; here the
				// creations keep to start + (i+1) × interval whatever a create takes.
				for i := range count {
					time.Sleep(time.Until(start.Add(time.Duration(i+1) * interval)))
					job := scenarioJob(system, round, q, c, i)
					w.created(job.Namespace+"/"+job.Name, c.Name, c.GPUs, int64(run))
					if err := cb.createJob(system, job); err != nil {
						failed.Store(job.Namespace+"/"+job.Name, err)
					}
				}
			})
		}
	}
	wg.Wait()
	failed.Range(func(k, v any) bool { b.Fatalf("creating Job %s: %v", k, v); return false })
	// A system that has not finished by scenarioCutOff × the bound is cut off: its round
	// reports the work done by then over that time, and how much was left.
	bound := ks.Bound().WorkBound
	finished := poll.Within(time.Until(start.Add(scenarioCutOff*bound)), func() bool { return w.completed() == scenarioJobs() })
	if !finished {
		log := filepath.Join(cb.cluster.Dir(), "logs", devcluster.OperatorKueue+".log")
		if system == systemArbiter {
			log = sb.arbiterLog
		}
		b.Logf("%s cut off at %d× the bound: %d of %d Jobs complete (%s); its log ends:\n%s",
			systemName[system], scenarioCutOff, w.completed(), scenarioJobs(), w.progress(), tail(log))
	}
	r := w.result(start.Add(scenarioCutOff * bound))
	// Every process's share shows what else the round waited on (the Job controller in
	// kube-controller-manager, kwok, the API server) when the machine was busy.
	r.diagnosis = w.diagnosis() + "; " + cb.readCPU().since(machine)
	cpuAfter := readCPU(pids)
	for name := range pids {
		r.cpuSeconds += (cpuAfter[name] - cpu[name]).Seconds()
	}
	r.peakMB = peakMemoryMB(pids)
	if system == systemArbiter {
		r.activity = "; " + arbiterActivity(counters, arbiterCounters(cb.ctx, cb.arbiter.url))
	}
	w.stop()
	sb.clean(system, round)
	return r
}

// schedulerPIDs names the processes that schedule for system: Arbiter, or Kueue and
// kube-scheduler.
func (cb *clusterBench) schedulerPIDs(system string) map[string]int {
	all := cb.pids()
	if system == systemArbiter {
		return map[string]int{"arbiter": all["arbiter"]}
	}
	return map[string]int{"kueue": all[devcluster.OperatorKueue], "kube-scheduler": all["kube-scheduler"]}
}

// clean deletes the round's Jobs and waits until their pods, Jobs and Workloads
// are gone, then deletes the namespaces' events, so that the next round starts as this one did.
func (sb *scenarioBench) clean(system, round string) {
	cb := sb.clusterBench
	b := cb.b
	b.Helper()
	selector := metav1.ListOptions{LabelSelector: scenarioRoundLabel + "=" + round}
	background := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	for _, q := range sb.queues {
		if err := cb.client.BatchV1().Jobs(q.ns[system]).DeleteCollection(cb.ctx, background, selector); err != nil {
			b.Fatalf("deleting the Jobs of round %s: %v", round, err)
		}
	}
	for _, q := range sb.queues {
		ns := q.ns[system]
		poll.UntilNil(b, "the round's Jobs, pods and Workloads are gone", 5*time.Minute, func() error {
			jobs, err := cb.client.BatchV1().Jobs(ns).List(cb.ctx, selector)
			if err != nil {
				return err
			}
			pods, err := cb.client.CoreV1().Pods(ns).List(cb.ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			workloads, err := sb.dyn.Resource(kueueWorkloads).Namespace(ns).List(cb.ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if n := len(jobs.Items) + len(pods.Items) + len(workloads.Items); n > 0 {
				return fmt.Errorf("%s: %d Jobs, %d pods, %d Workloads left", ns, len(jobs.Items), len(pods.Items), len(workloads.Items))
			}
			return nil
		})
		if err := cb.client.CoreV1().Events(ns).DeleteCollection(cb.ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			b.Logf("events of round %s not deleted: %v", round, err)
		}
	}
}
