package kube

import (
	"container/heap"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
)

// simCluster plays, on simulated time, the parts of a cluster Arbiter's scheduler deals with,
// as the local control plane plays them (docs/devcluster.md): the API server (client-go's fake
// clientsets, whose reactors land here), the Job controller (it creates a Job's pods one after
// another, deletes them when the Job is suspended, replaces a pod evicted by Arbiter and
// completes the Job when its pods have succeeded), kwok (a bound pod starts a moment later and
// succeeds after its arbiter.dev/run-seconds; a deleted pod goes at once) and the informers
// (each change reaches the cache a few milliseconds later). The scheduler is the real one —
// its cache, Settle, Snapshot, Plan and apply — with its clock set to the simulation's, and its
// cycles come as Run's loop brings them: every second, and a moment after any change that
// can change a decision.
type simCluster struct {
	mu    sync.Mutex // the reactors run on apply's goroutines
	now   time.Time
	rng   *rand.Rand
	queue simQueue
	seq   int

	jobs  map[types.UID]*batchv1.Job
	pods  map[types.UID]*corev1.Pod
	names map[string]types.UID // namespace/name → UID, of jobs and pods
	// creating counts the pods the Job controller is about to create for a Job (its
	// expectations), so that a sync does not create them twice
	creating map[types.UID]int

	cache   *Cache
	sched   *Scheduler
	ctx     context.Context
	timings simTimings
}

// simTimings are how long the simulated Job controller and kwok take, each give or take half.
type simTimings struct {
	controllerLag time.Duration // the Job controller reacts to a change
	startDelay    time.Duration // a bound pod starts
}

// Timings of the simulated control plane (a busy local one: milliseconds, not microseconds).
const (
	simWatchDelay   = 3 * time.Millisecond  // an object's change reaches the informers
	simPodCreateGap = 15 * time.Millisecond // between two pods the Job controller creates
	simJobTTL       = 300 * time.Second
)

var simDefaultTimings = simTimings{controllerLag: 30 * time.Millisecond, startDelay: 200 * time.Millisecond}

func newSimCluster(seed uint64, start time.Time, settings *Settings, nodes []*corev1.Node) *simCluster {
	c := &simCluster{
		now: start, rng: rand.New(rand.NewPCG(seed, seed^0x5eed)),
		jobs: map[types.UID]*batchv1.Job{}, pods: map[types.UID]*corev1.Pod{}, names: map[string]types.UID{},
		creating: map[types.UID]int{}, cache: NewCache("arbiter"), ctx: context.Background(), timings: simDefaultTimings,
	}
	client := fake.NewClientset()
	client.PrependReactor("*", "*", c.react)
	dyn := dynfake.NewSimpleDynamicClient(runtime.NewScheme())
	dyn.PrependReactor("*", "*", c.react)
	c.sched = &Scheduler{
		opts: Options{SchedulerName: "arbiter", Observer: noObserver{}}, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		client: client, dynamic: dyn, cache: c.cache, lastReason: map[string]string{}, warned: map[string]bool{},
		workers: 1, // one call at a time: the same seed, the same run
		tasks:   make(chan func(context.Context), 1<<16), now: func() time.Time { return c.now },
	}
	c.sched.settings.Store(settings)
	c.cache.now = c.sched.now
	for _, n := range nodes {
		c.cache.UpsertNode(n)
	}
	return c
}

// simNodes are the demo's nodes: devcluster's default pools, Ready as kwok makes them.
func simNodes() []*corev1.Node {
	pools, err := devcluster.ParseNodeSpec(devcluster.DefaultNodes)
	if err != nil {
		panic(err)
	}
	var nodes []*corev1.Node
	for _, p := range pools {
		for i := range p.Nodes {
			n := p.Node(i)
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// after schedules f at d from now.
func (c *simCluster) after(d time.Duration, f func()) {
	c.seq++
	heap.Push(&c.queue, simEvent{at: c.now.Add(d), seq: c.seq, do: f})
}

// jitter is d give or take half of it.
func (c *simCluster) jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(c.rng.Int64N(int64(d)+1))
}

func (c *simCluster) uid(kind string) types.UID {
	c.seq++
	return types.UID(kind + "-" + strconv.Itoa(c.seq))
}

// --- the API server ---

// react answers the scheduler's API calls: binds, pod deletions and condition patches, and
// patches of a Job's suspend switch. Anything else succeeds and changes nothing.
func (c *simCluster) react(a k8stesting.Action) (bool, runtime.Object, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case a.GetVerb() == "create" && a.GetResource().Resource == "pods" && a.GetSubresource() == "binding":
		b := a.(k8stesting.CreateAction).GetObject().(*corev1.Binding)
		c.bind(b.UID, b.Target.Name)
	case a.GetVerb() == "delete" && a.GetResource().Resource == "pods":
		d := a.(k8stesting.DeleteAction)
		c.deletePod(c.names[d.GetNamespace()+"/"+d.GetName()], true)
	case a.GetVerb() == "patch" && a.GetResource().Resource == "jobs":
		p := a.(k8stesting.PatchAction)
		var patch struct {
			Metadata struct {
				Annotations map[string]*string `json:"annotations"`
			} `json:"metadata"`
			Spec struct {
				Suspend *bool `json:"suspend"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(p.GetPatch(), &patch); err != nil {
			return true, nil, err
		}
		if j := c.jobs[c.names[p.GetNamespace()+"/"+p.GetName()]]; j != nil {
			j = j.DeepCopy()
			for k, v := range patch.Metadata.Annotations {
				if v == nil {
					delete(j.Annotations, k)
				} else {
					if j.Annotations == nil {
						j.Annotations = map[string]string{}
					}
					j.Annotations[k] = *v
				}
			}
			if patch.Spec.Suspend != nil {
				j.Spec.Suspend = patch.Spec.Suspend
			}
			c.putJob(j)
		}
	}
	return true, nil, nil
}

// --- objects changing, and the informers that tell the cache ---

func (c *simCluster) putJob(j *batchv1.Job) {
	c.jobs[j.UID] = j
	c.names[j.Namespace+"/"+j.Name] = j.UID
	o := ownerFromJob(j)
	c.after(simWatchDelay, func() { c.cache.UpsertOwner(o) })
	c.after(c.jitter(c.timings.controllerLag), func() { c.syncJob(j.UID) })
}

func (c *simCluster) putPod(p *corev1.Pod) {
	c.pods[p.UID] = p
	c.names[p.Namespace+"/"+p.Name] = p.UID
	seen := p.DeepCopy()
	c.after(simWatchDelay, func() { c.cache.UpsertPod(seen) })
}

func (c *simCluster) removePod(uid types.UID) {
	p := c.pods[uid]
	if p == nil {
		return
	}
	delete(c.pods, uid)
	delete(c.names, p.Namespace+"/"+p.Name)
	c.after(simWatchDelay, func() { c.cache.DeletePod(uid) })
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "Job" {
		c.after(c.jitter(c.timings.controllerLag), func() { c.syncJob(ref.UID) })
	}
}

// --- kwok ---

func (c *simCluster) bind(uid types.UID, node string) {
	p := c.pods[uid]
	if p == nil || p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
		return
	}
	p = p.DeepCopy()
	p.Spec.NodeName = node
	c.putPod(p)
	c.after(c.jitter(c.timings.startDelay), func() {
		p := c.pods[uid]
		if p == nil || p.DeletionTimestamp != nil {
			return
		}
		p = p.DeepCopy()
		started := metav1.NewTime(c.now)
		p.Status.Phase, p.Status.StartTime = corev1.PodRunning, &started
		c.putPod(p)
		secs, err := strconv.Atoi(p.Annotations[devcluster.AnnotationRunSeconds])
		if err != nil {
			return // runs until deleted
		}
		c.after(time.Duration(secs)*time.Second, func() { c.succeed(uid, started) })
	})
}

func (c *simCluster) succeed(uid types.UID, started metav1.Time) {
	p := c.pods[uid]
	if p == nil || p.DeletionTimestamp != nil || p.Status.StartTime == nil || !p.Status.StartTime.Equal(&started) {
		return
	}
	p = p.DeepCopy()
	p.Status.Phase = corev1.PodSucceeded
	c.putPod(p)
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "Job" {
		if j := c.jobs[ref.UID]; j != nil {
			j = j.DeepCopy()
			j.Status.Succeeded++
			if j.Spec.Completions != nil && j.Status.Succeeded >= *j.Spec.Completions {
				j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue})
				jobUID := j.UID
				c.after(simJobTTL, func() { c.deleteJob(jobUID) })
			}
			c.putJob(j)
		}
	}
	// a finished pod stays until its Job goes
}

// deletePod marks a pod deleted; kwok lets it go at once, after the watch carried the mark.
// evicted says Arbiter deleted it (a DisruptionTarget condition: the Job replaces it).
func (c *simCluster) deletePod(uid types.UID, evicted bool) {
	p := c.pods[uid]
	if p == nil || p.DeletionTimestamp != nil {
		return
	}
	p = p.DeepCopy()
	at := metav1.NewTime(c.now)
	p.DeletionTimestamp = &at
	c.putPod(p)
	c.after(c.jitter(20*time.Millisecond), func() { c.removePod(uid) })
}

// --- the Job controller ---

// syncJob brings a Job's active pods to what it wants: its parallelism (no more than the
// completions left) unless it is suspended or finished, when it wants none.
func (c *simCluster) syncJob(uid types.UID) {
	j := c.jobs[uid]
	if j == nil {
		return
	}
	want := 0
	finished := len(j.Status.Conditions) > 0
	if !finished && (j.Spec.Suspend == nil || !*j.Spec.Suspend) {
		want = int(*j.Spec.Parallelism)
		if j.Spec.Completions != nil {
			want = min(want, int(*j.Spec.Completions-j.Status.Succeeded))
		}
	}
	var active []types.UID
	for _, pu := range c.podsOf(uid) {
		if p := c.pods[pu]; p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded {
			active = append(active, pu)
		}
	}
	have := len(active) + c.creating[uid]
	for i := range want - have {
		c.creating[uid]++
		c.after(time.Duration(i+1)*c.jitter(simPodCreateGap), func() {
			c.creating[uid]--
			if j := c.jobs[uid]; j != nil {
				c.createPod(j)
			}
		})
	}
	for i := 0; i < len(active)-want; i++ {
		c.deletePod(active[i], false)
	}
}

func (c *simCluster) createPod(j *batchv1.Job) {
	name := j.Name + "-" + strconv.Itoa(c.rng.IntN(1e6))
	p := &corev1.Pod{
		ObjectMeta: *j.Spec.Template.ObjectMeta.DeepCopy(),
		Spec:       *j.Spec.Template.Spec.DeepCopy(),
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	p.Name, p.Namespace, p.UID = name, j.Namespace, c.uid("pod")
	p.CreationTimestamp = metav1.NewTime(c.now)
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels["batch.kubernetes.io/job-name"] = j.Name
	p.Labels["batch.kubernetes.io/controller-uid"] = string(j.UID)
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID, Controller: &yes}}
	c.putPod(p)
}

func (c *simCluster) createJob(j *batchv1.Job) *batchv1.Job {
	j = j.DeepCopy()
	if j.Name == "" {
		j.Name = j.GenerateName + strconv.FormatInt(c.rng.Int64N(1e8), 36)
	}
	j.UID = c.uid("job")
	j.CreationTimestamp = metav1.NewTime(c.now)
	c.putJob(j)
	return j
}

func (c *simCluster) deleteJob(uid types.UID) {
	j := c.jobs[uid]
	if j == nil {
		return
	}
	delete(c.jobs, uid)
	delete(c.names, j.Namespace+"/"+j.Name)
	for _, pu := range c.podsOf(uid) {
		c.removePod(pu)
	}
	c.after(simWatchDelay, func() { c.cache.DeleteOwner(uid) })
}

// createDeployment makes a Deployment, its ReplicaSet and its running pods (they never end).
func (c *simCluster) createDeployment(d *appsv1.Deployment) {
	d = d.DeepCopy()
	d.UID, d.CreationTimestamp = c.uid("deploy"), metav1.NewTime(c.now)
	yes := true
	rs := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-rs", Namespace: d.Namespace, UID: c.uid("rs"),
		CreationTimestamp: d.CreationTimestamp,
		OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes}}}}
	c.cache.UpsertOwner(ownerOf(d, "apps/v1", "Deployment"))
	c.cache.UpsertOwner(ownerOf(rs, "apps/v1", "ReplicaSet"))
	for i := range *d.Spec.Replicas {
		p := &corev1.Pod{ObjectMeta: *d.Spec.Template.ObjectMeta.DeepCopy(), Spec: *d.Spec.Template.Spec.DeepCopy()}
		p.Name, p.Namespace, p.UID = rs.Name+"-"+strconv.Itoa(int(i)), d.Namespace, c.uid("pod")
		p.CreationTimestamp = d.CreationTimestamp
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}
		c.putPod(p)
	}
}

// podsOf lists the pods a controller owns, by UID (the simulation's order is its seed's alone).
func (c *simCluster) podsOf(owner types.UID) []types.UID {
	var out []types.UID
	for pu, p := range c.pods {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == owner {
			out = append(out, pu)
		}
	}
	slices.Sort(out)
	return out
}

// demoJobs lists the Jobs as the demo's List call would: those not deleted.
func (c *simCluster) demoJobs() []batchv1.Job {
	out := make([]batchv1.Job, 0, len(c.jobs))
	for _, j := range c.jobs {
		out = append(out, *j)
	}
	return out
}

// --- time ---

// runUntil plays the cluster and the scheduler's loop until end, calling observe with every
// cycle's result and each tick at the given interval.
func (c *simCluster) runUntil(end time.Time, tick time.Duration, onTick func(), observe func(*Result)) {
	c.sched.opts.OnCycle = observe
	nextTick, nextCycle := c.now, c.now
	changed := false
	for c.now.Before(end) {
		cycleAt := nextCycle
		if changed && c.now.Add(settle).Before(cycleAt) {
			cycleAt = c.now.Add(settle)
		}
		switch {
		case !nextTick.After(cycleAt) && (c.queue.Len() == 0 || !nextTick.After(c.queue[0].at)):
			c.now = nextTick
			nextTick = nextTick.Add(tick)
			c.mu.Lock()
			onTick()
			c.mu.Unlock()
		case c.queue.Len() > 0 && !c.queue[0].at.After(cycleAt):
			e := heap.Pop(&c.queue).(simEvent)
			c.now = e.at
			c.mu.Lock()
			e.do()
			c.mu.Unlock()
			select {
			case <-c.cache.Changed():
				changed = true
			default:
			}
		default:
			c.now = cycleAt
			c.sched.cycle(c.ctx)
			c.drainTasks()
			nextCycle = c.now.Add(time.Second)
			changed = false
			select {
			case <-c.cache.Changed():
				changed = true
			default:
			}
		}
	}
}

// drainTasks runs the binds and pending reasons a cycle handed to the worker pool, as its
// workers would right after it.
func (c *simCluster) drainTasks() {
	for {
		select {
		case task := <-c.sched.tasks:
			task(c.ctx)
		default:
			return
		}
	}
}

type simEvent struct {
	at  time.Time
	seq int
	do  func()
}

type simQueue []simEvent

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q simQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *simQueue) Push(x any)   { *q = append(*q, x.(simEvent)) }
func (q *simQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
