package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// The end-to-end scale benchmarks of docs/testing.md "Benchmarks": a local control plane with 500 kwok nodes of
// 8 GPUs, Arbiter scheduling 4,000 one-GPU Jobs, and kube-scheduler from the same build
// scheduling the same pods, measured in the same run.
const (
	benchNodes = 500
	benchGPUs  = 8
	benchJobs  = 4000
)

type clusterBench struct {
	b   *testing.B
	ctx context.Context
	// stop stops the control plane and removes its state, once: before the benchmark ends
	// for a round that had a control plane of its own, else when it ends
	stop    func()
	cluster *devcluster.Cluster
	client  kubernetes.Interface
	st      *store.Store
	pool    store.NodePool
	dept    store.Department
	running atomic.Int64
	podsMu  sync.Mutex
	seen    map[string]time.Time // pod → when the informer first saw it (created by its Job)
	started map[string]time.Time // pod → when it was first seen Running
	// jobStarted is when a Job's first pod was first seen Running, by namespace/name.
	jobStarted map[string]time.Time
	// jobPodSeen is when a Job's first pod was first seen, by namespace/name.
	jobPodSeen map[string]time.Time
	lags       []time.Duration // per pod: seen → Running
	bound      map[string]bool
	bindLag    []time.Duration // per pod: seen → bound (spec.nodeName set), the scheduler's own part
	// lastSeen is when the newest pod was first seen: in a fill, when the Job controller made
	// its last pod, after which the scheduler has only that pod to place.
	lastSeen time.Time
	arbiter  *schedulerProcess // nil until started
	dbURL    string
	// seenIn and boundIn count pods seen and bound by namespace; firstBoundIn is when the
	// watch saw the namespace's first bound pod since its count was last reset
	seenIn, boundIn map[string]int
	firstBoundIn    map[string]time.Time

	// jobPodBound is when a Job's first pod was first seen bound to a node, by namespace/name.
	jobPodBound map[string]time.Time
	// ends are the pods seen marked for deletion, in that order, each with when it was marked
	// and when it was gone; lagPercentile empties it with the round's other samples.
	ends  []podEnd
	endOf map[string]int // pod → its index in ends
}

// podEnd is when a pod was first seen marked for deletion and when it was seen gone.
type podEnd struct {
	pod          string
	marked, gone time.Time
}

// startClusterBench starts the fill's cluster: benchNodes nodes, kube-scheduler and Arbiter running.
func startClusterBench(b *testing.B) *clusterBench {
	b.Helper()
	cb := startCluster(b, benchNodes, true)
	cb.arbiter = startArbiter(b, cb.dbURL, cb.cluster.Kubeconfig())
	return cb
}

// startCluster starts a local control plane with nodes kwok nodes of benchGPUs GPUs in one
// node pool, a department owning them all, and a pod watcher, running operators (e.g. Kueue,
// the peer); no Arbiter yet.
func startCluster(b *testing.B, nodes int, kubeScheduler bool, operators ...string) *clusterBench {
	b.Helper()
	cb := startControlPlane(b, nodes, benchGPUs, kubeScheduler, operators...)
	// Count Running pods as the API server reports them.
	factory := informers.NewSharedInformerFactory(cb.client, 0)
	inf := factory.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { cb.observe(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { cb.observe(obj.(*corev1.Pod)) },
		DeleteFunc: func(obj any) { cb.observeGone(obj) },
	})
	factory.Start(cb.ctx.Done())
	factory.WaitForCacheSync(cb.ctx.Done())
	quota := []store.QuotaInput{{NodePoolID: &cb.pool.ID, Deserved: nodes * benchGPUs}}
	var err error
	if cb.dept, err = cb.st.CreateDepartment(cb.ctx, store.DepartmentUpdate{Name: optional("bench"), Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &quota}}, benchActor); err != nil {
		b.Fatal(err)
	}
	return cb
}

// startControlPlane starts a local control plane with nodes kwok nodes of gpus GPUs each,
// running operators, with a client fast enough not to be the benchmark's bottleneck, a
// database and the node pool "bench" holding the nodes; no department, watcher or Arbiter.
func startControlPlane(b *testing.B, nodes, gpus int, kubeScheduler bool, operators ...string) *clusterBench {
	b.Helper()
	dir, err := os.MkdirTemp("", "arbiter-bench-")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	c, err := devcluster.Start(ctx, devcluster.Options{Dir: dir, Nodes: fmt.Sprintf("bench=%dx%d", nodes, gpus), KubeScheduler: kubeScheduler, Operators: operators, Progress: os.Stderr, Timeout: 10 * time.Minute})
	if err != nil {
		cancel()
		os.RemoveAll(dir)
		b.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = c.Stop(context.Background())
			cancel()
			os.RemoveAll(dir)
		})
	}
	b.Cleanup(stop)
	b.Logf("local control plane with %d nodes ready in %s", nodes, time.Since(start).Round(time.Second))
	// Submitting 4,000 Jobs "at once" needs a client that is not the bottleneck.
	// It speaks protobuf, as kube-controller-manager and the schedulers do.
	fast := kube.ComponentConfig(c.RESTConfig())
	fast.QPS, fast.Burst = 2000, 4000
	client, err := kubernetes.NewForConfig(fast)
	if err != nil {
		b.Fatal(err)
	}
	cb := &clusterBench{b: b, ctx: ctx, stop: stop, cluster: c, client: client, seen: map[string]time.Time{}, started: map[string]time.Time{}, jobStarted: map[string]time.Time{}, jobPodSeen: map[string]time.Time{}, jobPodBound: map[string]time.Time{}, bound: map[string]bool{}, seenIn: map[string]int{}, boundIn: map[string]int{}, firstBoundIn: map[string]time.Time{}}
	cb.dbURL = testdb.NewURL(b)
	pool, err := pgxpool.New(ctx, cb.dbURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	cb.st = store.New(pool)
	if cb.pool, err = cb.st.CreateNodePool(ctx, store.NodePoolUpdate{Name: optional("bench"), LabelKey: optional(devcluster.LabelNodePool), LabelValue: optional("bench")}, benchActor); err != nil {
		b.Fatal(err)
	}
	return cb
}

// benchActor is who the benchmarks' organization is written as.
var benchActor = store.Actor{Subject: "bench", SubjectType: "system"}

// optional is a set optional string of a store update.
func optional(s string) store.Optional[string] { return store.Optional[string]{Set: true, Value: &s} }

// pids names the processes of the control plane and Arbiter.
func (cb *clusterBench) pids() map[string]int {
	pids := cb.cluster.PIDs()
	if cb.arbiter != nil {
		pids["arbiter"] = cb.arbiter.pid
	}
	return pids
}

// readCPU reads the CPU time used so far by the control plane, Arbiter, PostgreSQL and the
// benchmark itself.
func (cb *clusterBench) readCPU() cpuTimes { return readCPU(cb.pids()) }

func (cb *clusterBench) observe(p *corev1.Pod) {
	key := p.Namespace + "/" + p.Name
	now := time.Now()
	cb.podsMu.Lock()
	defer cb.podsMu.Unlock()
	if _, ok := cb.seen[key]; !ok {
		cb.seen[key] = now
		cb.lastSeen = now
		cb.seenIn[p.Namespace]++
		if job := p.Labels[batchv1.JobNameLabel]; job != "" {
			if _, ok := cb.jobPodSeen[p.Namespace+"/"+job]; !ok {
				cb.jobPodSeen[p.Namespace+"/"+job] = now
			}
		}
	}
	if p.Spec.NodeName != "" && !cb.bound[key] {
		cb.bound[key] = true
		if cb.boundIn[p.Namespace]++; cb.boundIn[p.Namespace] == 1 {
			cb.firstBoundIn[p.Namespace] = now
		}
		cb.bindLag = append(cb.bindLag, now.Sub(cb.seen[key]))
		if job := p.Labels[batchv1.JobNameLabel]; job != "" {
			if _, ok := cb.jobPodBound[p.Namespace+"/"+job]; !ok {
				cb.jobPodBound[p.Namespace+"/"+job] = now
			}
		}
	}
	if p.DeletionTimestamp != nil {
		cb.markEnd(key, now)
	}
	if p.Status.Phase != corev1.PodRunning {
		return
	}
	if job := p.Labels[batchv1.JobNameLabel]; job != "" {
		if _, ok := cb.jobStarted[p.Namespace+"/"+job]; !ok {
			cb.jobStarted[p.Namespace+"/"+job] = now
		}
	}
	if _, ok := cb.started[key]; !ok {
		cb.started[key] = now
		cb.lags = append(cb.lags, now.Sub(cb.seen[key]))
		cb.running.Add(1)
	}
}

// markEnd records that pod key was seen marked for deletion at now, once. The caller holds podsMu.
func (cb *clusterBench) markEnd(key string, now time.Time) {
	if cb.endOf == nil {
		cb.endOf = map[string]int{}
	}
	if _, ok := cb.endOf[key]; !ok {
		cb.endOf[key] = len(cb.ends)
		cb.ends = append(cb.ends, podEnd{pod: key, marked: now})
	}
}

// observeGone records when a pod was seen gone.
func (cb *clusterBench) observeGone(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	key := p.Namespace + "/" + p.Name
	now := time.Now()
	cb.podsMu.Lock()
	defer cb.podsMu.Unlock()
	cb.markEnd(key, now)
	cb.ends[cb.endOf[key]].gone = now
}

// firstEndAfter is the first pod of namespace ns seen marked for deletion at or after t: in
// a round of one submission at a time, the one evicted for the submission seen at t.
func (cb *clusterBench) firstEndAfter(ns string, t time.Time) (podEnd, bool) {
	cb.podsMu.Lock()
	defer cb.podsMu.Unlock()
	for _, e := range cb.ends {
		if !e.marked.Before(t) && strings.HasPrefix(e.pod, ns+"/") {
			return e, true
		}
	}
	return podEnd{}, false
}

// lagPercentile returns quantiles of the time from a pod's creation to Running and to being
// bound, then resets the samples.
func (cb *clusterBench) lagPercentile(qs ...float64) []time.Duration {
	cb.podsMu.Lock()
	defer cb.podsMu.Unlock()
	out := append(quantiles(cb.lags, qs), quantiles(cb.bindLag, qs)...)
	cb.lags, cb.bindLag = nil, nil
	cb.ends, cb.endOf = nil, nil
	return out
}

func quantiles(samples []time.Duration, qs []float64) []time.Duration {
	l := slices.Clone(samples)
	slices.Sort(l)
	out := make([]time.Duration, len(qs))
	for i, q := range qs {
		if len(l) > 0 {
			out[i] = l[int(float64(len(l)-1)*q)]
		}
	}
	return out
}

// project makes a project owning a new namespace, with no limit.
func (cb *clusterBench) project(name string, deserved int) string {
	cb.b.Helper()
	return cb.projectWithLimit(name, deserved, -1)
}

// projectWithLimit makes a project owning a new namespace, limited to limit GPUs (-1: no limit).
func (cb *clusterBench) projectWithLimit(name string, deserved, limit int) string {
	cb.b.Helper()
	if _, err := cb.client.CoreV1().Namespaces().Create(cb.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		cb.b.Fatal(err)
	}
	_, err := cb.st.CreateProject(cb.ctx, store.ProjectUpdate{
		Name: store.Optional[string]{Set: true, Value: &name}, DepartmentID: store.Optional[uuid.UUID]{Set: true, Value: &cb.dept.ID},
		Namespaces: store.Optional[[]string]{Set: true, Value: &[]string{name}},
		NodePools:  store.Optional[[]uuid.UUID]{Set: true, Value: &[]uuid.UUID{cb.pool.ID}},
		Resources:  store.Optional[[]store.QuotaInput]{Set: true, Value: &[]store.QuotaInput{{NodePoolID: &cb.pool.ID, Deserved: deserved, Limit: &limit}}},
	}, store.Actor{Subject: "bench", SubjectType: "system"})
	if err != nil {
		cb.b.Fatal(err)
	}
	return name
}

func oneGPUJob(name, namespace, schedulerName string, labels map[string]string) *batchv1.Job {
	return objects.Job(name, namespace).Labels(labels).BackoffLimit(6).SchedulerName(schedulerName).Obj()
}

// concurrently calls f(0) … f(n-1) from 32 goroutines and counts the calls that failed.
func concurrently(n int, f func(i int) error) int64 {
	var wg sync.WaitGroup
	var failed, next atomic.Int64
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				if f(int(i)) != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return failed.Load()
}

// createJobs creates n one-GPU Jobs with 32 concurrent clients.
func (cb *clusterBench) createJobs(namespace, prefix, schedulerName string, n int, labels map[string]string) {
	cb.b.Helper()
	failed := concurrently(n, func(i int) error {
		_, err := cb.client.BatchV1().Jobs(namespace).Create(cb.ctx, oneGPUJob(fmt.Sprintf("%s-%d", prefix, i), namespace, schedulerName, labels), metav1.CreateOptions{})
		return err
	})
	if failed > 0 {
		cb.b.Fatalf("%d Job creations failed", failed)
	}
}

func (cb *clusterBench) waitRunning(target int64, timeout time.Duration) (time.Duration, bool) {
	start := time.Now()
	ok := poll.Within(timeout, func() bool { return cb.running.Load() >= target })
	return time.Since(start), ok
}

// BenchmarkFillCluster: 4,000 one-GPU Jobs created at once on 500 kwok nodes × 8 GPUs, until
// all run (target ≤ 60 s; KAI: 6 min 38 s), through Arbiter and through kube-scheduler, after
// a warm-up round, in the order Arbiter, kube-scheduler, kube-scheduler, Arbiter so that
// neither gains from going earlier or later.
// Run with -benchtime=1x.
func BenchmarkFillCluster(b *testing.B) {
	cb := startClusterBench(b)
	namespaces := map[string]string{"arbiter": cb.project("fill", benchNodes*benchGPUs), corev1.DefaultSchedulerName: cb.project("baseline", 0)}
	name := map[string]string{"arbiter": "Arbiter", corev1.DefaultSchedulerName: "kube-scheduler"}
	// A fresh API server's watch cache starts small and grows with the traffic it sees; until
	// it has, a flood of pods makes it drop watchers as too slow. A first, unmeasured round
	// gets every measured one the same, used API server.
	_, summary := cb.fill(namespaces[corev1.DefaultSchedulerName], "warmup", corev1.DefaultSchedulerName)
	b.Logf("warm-up round, kube-scheduler: %s", summary)
	for b.Loop() {
		total := map[string]time.Duration{}
		for round, scheduler := range []string{"arbiter", corev1.DefaultSchedulerName, corev1.DefaultSchedulerName, "arbiter"} {
			took, summary := cb.fill(namespaces[scheduler], fmt.Sprintf("r%d", round), scheduler)
			total[scheduler] += took
			b.Logf("round %d, %s: %s", round+1, name[scheduler], summary)
		}
		arbiter, kube := total["arbiter"]/2, total[corev1.DefaultSchedulerName]/2
		b.ReportMetric(arbiter.Seconds(), "arbiter-s")
		b.ReportMetric(float64(benchJobs)/arbiter.Seconds(), "arbiter-pods/s")
		b.ReportMetric(kube.Seconds(), "kube-scheduler-s")
		b.ReportMetric(float64(benchJobs)/kube.Seconds(), "kube-scheduler-pods/s")
		b.ReportMetric(kube.Seconds()/arbiter.Seconds(), "speedup-x")
		b.Logf("%s", peakMemory(cb.pids()))
		b.Logf("mean of two rounds each: Arbiter %s (%.1f pods/s), kube-scheduler %s (%.1f pods/s); Arbiter/kube-scheduler pods/s %.2f",
			arbiter.Round(time.Millisecond), float64(benchJobs)/arbiter.Seconds(), kube.Round(time.Millisecond), float64(benchJobs)/kube.Seconds(), kube.Seconds()/arbiter.Seconds())
	}
}

// fill creates benchJobs one-GPU Jobs for a scheduler, waits until all run, reports how long
// that took from the first create and what it cost, then deletes them and their events and
// waits until their pods are gone.
func (cb *clusterBench) fill(ns, prefix, schedulerName string) (time.Duration, string) {
	b := cb.b
	b.Helper()
	cb.running.Store(0)
	cpu, reqs := cb.readCPU(), readRequests(cb.ctx, cb.client)
	start := time.Now()
	cb.createJobs(ns, prefix, schedulerName, benchJobs, nil)
	created := time.Since(start)
	if _, ok := cb.waitRunning(benchJobs, 10*time.Minute); !ok {
		b.Fatalf("%s: only %d of %d pods Running after %s", schedulerName, cb.running.Load(), benchJobs, time.Since(start))
	}
	took := time.Since(start)
	cb.podsMu.Lock()
	lastPod := cb.lastSeen.Sub(start)
	cb.podsMu.Unlock()
	lag := cb.lagPercentile(0.5, 0.99)
	summary := fmt.Sprintf("%d Jobs created in %s; their last pod created after %s; all Running after %s; pod created→bound p50 %s p99 %s; created→Running p50 %s p99 %s; %s; %s",
		benchJobs, created.Round(time.Millisecond), lastPod.Round(time.Millisecond), took.Round(time.Millisecond), lag[2].Round(time.Millisecond), lag[3].Round(time.Millisecond),
		lag[0].Round(time.Millisecond), lag[1].Round(time.Millisecond), cb.readCPU().since(cpu), readRequests(cb.ctx, cb.client).since(reqs))
	cb.deleteJobs(ns, prefix, benchJobs)
	waitNoPods(b, cb, ns)
	// A round's 4,500 events would outlive it by an hour (their TTL), so that later rounds
	// would start with more objects than earlier ones.
	if err := cb.client.CoreV1().Events(ns).DeleteCollection(cb.ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		b.Logf("events of round %s not deleted: %v", prefix, err)
	}
	return took, summary
}

// deleteJobs deletes prefix-0 … prefix-(n-1) with 32 concurrent clients (one DeleteCollection
// of thousands of Jobs outlives the API server's request timeout).
func (cb *clusterBench) deleteJobs(namespace, prefix string, n int) {
	cb.b.Helper()
	concurrently(n, func(i int) error {
		return cb.client.BatchV1().Jobs(namespace).Delete(cb.ctx, fmt.Sprintf("%s-%d", prefix, i),
			metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	})
}

func waitNoPods(b *testing.B, cb *clusterBench, ns string) {
	b.Helper()
	poll.UntilNil(b, "the pods of the first run are gone", 5*time.Minute, func() error {
		list, err := cb.client.CoreV1().Pods(ns).List(cb.ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(list.Items) != 0 {
			return fmt.Errorf("%d pods left", len(list.Items))
		}
		return nil
	})
}

// waitJobsReady waits until n Jobs in the namespace report a ready pod.
func (cb *clusterBench) waitJobsReady(ns string, n int, timeout time.Duration) {
	cb.b.Helper()
	poll.UntilNil(cb.b, fmt.Sprintf("%d Jobs report a ready pod", n), timeout, func() error {
		list, err := cb.client.BatchV1().Jobs(ns).List(cb.ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		ready := 0
		for _, j := range list.Items {
			if j.Status.Ready != nil && *j.Status.Ready > 0 {
				ready++
			}
		}
		if ready < n {
			return fmt.Errorf("%d of %d Jobs report a ready pod", ready, n)
		}
		return nil
	})
}
