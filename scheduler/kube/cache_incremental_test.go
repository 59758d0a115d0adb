package kube

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

// clusterState is what the API server holds at one moment of a random history: the objects a
// fresh cache would be given by its informers' initial lists.
type clusterState struct {
	nodes  map[string]*corev1.Node
	owners map[types.UID]*owner
	pods   map[types.UID]*corev1.Pod
	// departed are the controllers of the owners deleted so far (Cache.departed)
	departed map[types.UID]*metav1.OwnerReference
}

// fresh builds a cache from the state alone, owners first, as after a restart, but for the
// links a running cache keeps of the owners it saw deleted.
func (s *clusterState) fresh() *Cache {
	c := NewCache("arbiter")
	for _, n := range s.nodes {
		c.UpsertNode(n)
	}
	for _, o := range s.owners {
		c.UpsertOwner(o)
	}
	// A cache that saw an owner leave keeps its controller while its pods remain
	// (Cache.departed): so does the reference.
	for uid, ref := range s.departed {
		c.keepDeparted(uid, ref)
	}
	for _, p := range s.pods {
		c.UpsertPod(p)
	}
	return c
}

// TestS4_IncrementalSnapshotMatchesFresh: however pods, owners and nodes arrive, change and
// leave (owners after their pods, re-parented pods, settings changes between snapshots), the
// incrementally kept cache yields the same snapshot as a cache built afresh from what the API
// server holds at that moment.
func TestS4_IncrementalSnapshotMatchesFresh(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { incrementalHistory(t, rand.New(rand.NewPCG(seed, 7))) })
	}
}

func incrementalHistory(t *testing.T, rng *rand.Rand) {
	settingsA := &Settings{
		WorkloadTypes:    []scheduler.WorkloadType{{Name: "Job", Group: "batch"}, {Name: "Deployment", Group: "apps"}},
		Projects:         []scheduler.Project{{Name: "team-a"}, {Name: "team-b"}},
		NamespaceProject: map[string]string{"ns": "team-a"},
	}
	settingsB := &Settings{WorkloadTypes: settingsA.WorkloadTypes, Projects: settingsA.Projects, NamespaceProject: map[string]string{"ns": "team-b"}}
	settings := settingsA

	state := &clusterState{nodes: map[string]*corev1.Node{}, owners: map[types.UID]*owner{}, pods: map[types.UID]*corev1.Pod{},
		departed: map[types.UID]*metav1.OwnerReference{}}
	c := NewCache("arbiter")
	pick := func(list ...string) string { return list[rng.IntN(len(list))] }

	// The owners that may exist: two Deployments with a ReplicaSet each, a CronJob with a Job,
	// two plain Jobs, one of them sometimes suspended by Arbiter.
	ref := func(kind, uid string) *metav1.OwnerReference {
		apiVersion := map[string]string{"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "Job": "batch/v1", "CronJob": "batch/v1"}[kind]
		r := controllerRef(apiVersion, kind, "o-"+uid, uid)
		return &r
	}
	ownerSpecs := map[types.UID]func() *owner{
		"d1": func() *owner { return ownerFrom(ownerObj("apps/v1", "Deployment", "o-d1", "d1", nil, nil)) },
		"d2": func() *owner { return ownerFrom(ownerObj("apps/v1", "Deployment", "o-d2", "d2", nil, nil)) },
		"rs1": func() *owner {
			return ownerFrom(ownerObj("apps/v1", "ReplicaSet", "o-rs1", "rs1", ref("Deployment", "d1"), nil))
		},
		"rs2": func() *owner {
			return ownerFrom(ownerObj("apps/v1", "ReplicaSet", "o-rs2", "rs2", ref("Deployment", "d2"), nil))
		},
		"cj": func() *owner { return ownerFrom(ownerObj("batch/v1", "CronJob", "o-cj", "cj", nil, nil)) },
		"j1": func() *owner {
			return ownerFrom(ownerObj("batch/v1", "Job", "o-j1", "j1", ref("CronJob", "cj"), map[string]any{"parallelism": int64(2)}))
		},
		"j2": func() *owner {
			spec := map[string]any{"parallelism": int64(1 + rng.IntN(3)), "template": map[string]any{"spec": map[string]any{"schedulerName": "arbiter"}}}
			suspended := rng.IntN(2) == 0
			if suspended {
				spec["suspend"] = true
			}
			o := ownerFrom(ownerObj("batch/v1", "Job", "o-j2", "j2", nil, spec))
			if suspended {
				o.Annotations = map[string]string{AnnotationSuspendedBy: "arbiter"}
			}
			return o
		},
		"j3": func() *owner { return ownerFrom(ownerObj("batch/v1", "Job", "o-j3", "j3", nil, nil)) },
	}
	ownerIDs := []string{"d1", "d2", "rs1", "rs2", "cj", "j1", "j2", "j3"}
	controllers := []*metav1.OwnerReference{ref("ReplicaSet", "rs1"), ref("ReplicaSet", "rs2"), ref("Job", "j1"), ref("Job", "j2"), ref("Job", "j3"), nil}

	newPod := func(uid types.UID) *corev1.Pod {
		p := gpuPod("pod-"+string(uid), string(uid), int64(rng.IntN(3)), controllers[rng.IntN(len(controllers))])
		if rng.IntN(5) == 0 {
			p.Spec.SchedulerName = "default-scheduler"
		}
		p.CreationTimestamp = metav1.NewTime(t0.Add(time.Duration(rng.IntN(100)) * time.Second))
		return p
	}
	changePod := func(old *corev1.Pod) *corev1.Pod {
		p := old.DeepCopy()
		switch rng.IntN(5) {
		case 0:
			p.Spec.NodeName = pick("n1", "n2")
		case 1:
			p.Status.Phase = corev1.PodPhase(pick(string(corev1.PodRunning), string(corev1.PodSucceeded), string(corev1.PodFailed)))
			if p.Status.Phase == corev1.PodRunning {
				p.Status.StartTime = &metav1.Time{Time: t0.Add(time.Duration(rng.IntN(100)) * time.Second)}
			}
		case 2:
			p.Labels = map[string]string{LabelProject: pick("team-a", "team-b", "nope")}
		case 3:
			now := metav1.NewTime(t0)
			p.DeletionTimestamp = &now
		case 4:
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: pick("A", "B")}}
		}
		return p
	}

	check := func(step int) {
		t.Helper()
		now := t0.Add(time.Hour)
		got := cycleView(c, now, settings)
		want := cycleView(state.fresh(), now, settings)
		opts := cmp.Options{cmpopts.EquateEmpty(), cmp.AllowUnexported(ownerRef{})}
		if d := cmp.Diff(want.Snapshot, got.Snapshot, opts); d != "" {
			t.Fatalf("step %d: incremental snapshot differs from a fresh one (-fresh +incremental):\n%s", step, d)
		}
		if d := cmp.Diff(want.meta, got.meta, opts); d != "" {
			t.Fatalf("step %d: incremental metadata differs from a fresh one (-fresh +incremental):\n%s", step, d)
		}
	}

	for step := 0; step < 300; step++ {
		switch r := rng.IntN(100); {
		case r < 35: // a pod arrives or changes
			uid := types.UID(fmt.Sprintf("p%d", rng.IntN(25)))
			p, ok := state.pods[uid]
			if ok {
				p = changePod(p)
			} else {
				p = newPod(uid)
			}
			state.pods[uid] = p
			c.UpsertPod(p)
		case r < 45: // a pod leaves
			for uid := range state.pods {
				delete(state.pods, uid)
				c.DeletePod(uid)
				break
			}
		case r < 65: // an owner arrives or changes
			id := types.UID(ownerIDs[rng.IntN(len(ownerIDs))])
			o := ownerSpecs[id]()
			if rng.IntN(3) == 0 {
				o.Labels = map[string]string{LabelProject: pick("team-a", "team-b"), LabelPriority: pick("train", "inference")}
			}
			state.owners[id] = o
			delete(state.departed, id)
			c.UpsertOwner(o)
		case r < 72: // an owner leaves
			id := types.UID(ownerIDs[rng.IntN(len(ownerIDs))])
			if o := state.owners[id]; o != nil && o.Controller != nil {
				state.departed[id] = o.Controller
			}
			delete(state.owners, id)
			c.DeleteOwner(id)
		case r < 80: // a node arrives or changes
			name := pick("n1", "n2")
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": pick("a", "b")}}, Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(4+rng.IntN(5)), resource.DecimalSI)},
			}}
			state.nodes[name] = n
			c.UpsertNode(n)
		case r < 83:
			name := pick("n1", "n2")
			delete(state.nodes, name)
			c.DeleteNode(name)
		case r < 86:
			settings = map[bool]*Settings{true: settingsA, false: settingsB}[settings != settingsA]
		default:
			check(step)
		}
	}
	check(300)
}

// TestS4_PodBeforeItsOwners: pending pods whose ReplicaSet and Deployment the cache has not
// seen yet (the owners' watches lag the pods') wait for them: grouped under the ReplicaSet
// they would be a workload of their own, which the scheduler could place and the recorder
// record, and which would then vanish into the Deployment's. Once both owners are in, they are
// the Deployment's workload, with its labels. A pod already bound is placed at once (it holds
// its node's resources). A pod whose owner is of a kind Arbiter does not watch is grouped by
// the reference (TestS4_TopOwner).
func TestS4_PodBeforeItsOwners(t *testing.T) {
	c := NewCache("arbiter")
	rs := controllerRef("apps/v1", "ReplicaSet", "serve-abc", "rs1")
	deploy := controllerRef("apps/v1", "Deployment", "serve", "d1")
	c.UpsertPod(gpuPod("serve-abc-1", "p1", 1, &rs))
	c.UpsertPod(gpuPod("serve-abc-2", "p2", 1, &rs))
	settings := &Settings{}
	uids := func() []string {
		snap := cycleView(c, t0, settings).Snapshot
		var out []string
		for _, w := range snap.Workloads {
			out = append(out, fmt.Sprintf("%s/%s:%d:%s", w.Kind, w.UID, len(w.Pods), w.Labels[LabelProject]))
		}
		slices.Sort(out)
		return out
	}
	if d := cmp.Diff([]string(nil), uids()); d != "" {
		t.Fatalf("before the owners (-want +got):\n%s", d)
	}
	c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "ReplicaSet", "serve-abc", "rs1", &deploy, nil)))
	if d := cmp.Diff([]string(nil), uids()); d != "" {
		t.Fatalf("after the ReplicaSet, before the Deployment (-want +got):\n%s", d)
	}
	d := ownerObj("apps/v1", "Deployment", "serve", "d1", nil, nil)
	d.SetLabels(map[string]string{LabelProject: "vision"})
	c.UpsertOwner(ownerFrom(d))
	if d := cmp.Diff([]string{"Deployment/d1:2:vision"}, uids()); d != "" {
		t.Fatalf("after the Deployment (-want +got):\n%s", d)
	}
	// A pod removed while it waits leaves nothing behind.
	rs2 := controllerRef("apps/v1", "ReplicaSet", "other-abc", "rs2")
	waiting := gpuPod("other-abc-1", "p3", 1, &rs2)
	c.UpsertPod(waiting)
	c.DeletePod(waiting.UID)
	c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "ReplicaSet", "other-abc", "rs2", nil, nil)))
	if d := cmp.Diff([]string{"Deployment/d1:2:vision"}, uids()); d != "" {
		t.Fatalf("after a waiting pod was deleted and its owner came (-want +got):\n%s", d)
	}
	// A bound pod of an unseen owner is placed, under the owner its reference names.
	job := controllerRef("batch/v1", "Job", "train", "j1")
	bound := gpuPod("train-0", "p4", 1, &job)
	bound.Spec.NodeName = "n1"
	c.UpsertPod(bound)
	if d := cmp.Diff([]string{"Deployment/d1:2:vision", "Job/j1:1:"}, uids()); d != "" {
		t.Fatalf("with a bound pod of an unseen Job (-want +got):\n%s", d)
	}
}

// TestChangedOnlyForDecisions: a bound pod reporting Running, a pending reason coming back,
// another scheduler's bind and a Job's status counters ask for no cycle; a new pod, a label
// change and another scheduler's pod ending do.
func TestChangedOnlyForDecisions(t *testing.T) {
	c := NewCache("arbiter")
	signalled := func() bool {
		select {
		case <-c.Changed():
			return true
		default:
			return false
		}
	}
	p := gpuPod("p", "u1", 1, nil)
	c.UpsertPod(p)
	if !signalled() {
		t.Error("a new pod did not ask for a cycle")
	}
	withReason := p.DeepCopy()
	withReason.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Queued"}}
	c.UpsertPod(withReason)
	if signalled() {
		t.Error("the pending reason Arbiter wrote coming back asked for a cycle")
	}
	c.Assume("u1", "n1", t0)
	bound := withReason.DeepCopy()
	bound.Spec.NodeName = "n1"
	c.UpsertPod(bound)
	running := bound.DeepCopy()
	running.Status.Phase = corev1.PodRunning
	running.Status.StartTime = &metav1.Time{Time: t0}
	c.UpsertPod(running)
	if signalled() {
		t.Error("Arbiter's own bind confirmed, or the pod going Running, asked for a cycle")
	}
	snap := cycleView(c, t0.Add(time.Hour), &Settings{}).Snapshot
	if w := snap.Workloads[0]; w.Phase != scheduler.PhaseRunning || !w.StartedAt.Equal(t0) {
		t.Errorf("the quiet updates were lost: phase %s started %s", w.Phase, w.StartedAt)
	}
	labelled := running.DeepCopy()
	labelled.Labels = map[string]string{LabelPriority: "train"}
	c.UpsertPod(labelled)
	if !signalled() {
		t.Error("a label change did not ask for a cycle")
	}
	foreign := gpuPod("other", "f1", 1, nil)
	foreign.Spec.SchedulerName = "default-scheduler"
	c.UpsertPod(foreign)
	foreign = foreign.DeepCopy()
	foreign.Spec.NodeName = "n1"
	c.UpsertPod(foreign)
	if signalled() {
		t.Error("another scheduler's pod arriving or being bound asked for a cycle")
	}
	done := foreign.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	c.UpsertPod(done)
	if !signalled() {
		t.Error("another scheduler's pod giving its GPUs back did not ask for a cycle")
	}

	job := ownerObj("batch/v1", "Job", "j", "j1", nil, map[string]any{"parallelism": int64(1)})
	c.UpsertOwner(ownerFrom(job))
	if signalled() {
		t.Error("a Job arriving before its pods asked for a cycle")
	}
	ref := controllerRef("batch/v1", "Job", "j", "j1")
	c.UpsertPod(gpuPod("j-pod", "jp1", 1, &ref))
	if !signalled() {
		t.Error("the Job's pod arriving did not ask for a cycle")
	}
	job.Object["status"] = map[string]any{"active": int64(1), "ready": int64(1)}
	c.UpsertOwner(ownerFrom(job))
	if signalled() {
		t.Error("a Job's status counters asked for a cycle")
	}
	job.SetLabels(map[string]string{LabelPriority: "train"})
	c.UpsertOwner(ownerFrom(job))
	if !signalled() {
		t.Error("a label change on a Job with pods did not ask for a cycle")
	}

	// A pod that comes before its owner waits for it (TestS4_PodBeforeItsOwners); the owner's
	// arrival places it (its labels, its own controller) and asks for a cycle.
	rsRef := controllerRef("apps/v1", "ReplicaSet", "rs", "rs1")
	c.UpsertPod(gpuPod("rs-pod", "rp1", 1, &rsRef))
	signalled()
	c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "ReplicaSet", "rs", "rs1", nil, nil)))
	if !signalled() {
		t.Error("an owner arriving after its pods did not ask for a cycle")
	}
	c.DeleteOwner("rs1")
	if !signalled() {
		t.Error("an owner with pods leaving did not ask for a cycle")
	}
	c.DeleteOwner("never-seen")
	if signalled() {
		t.Error("an owner without pods leaving asked for a cycle")
	}
}

// TestS4_PodsOfADeletedReplicaSetStayTheirDeploymentsWorkload: a Deployment deleted in the
// background goes first, then the garbage collector deletes its ReplicaSet, then the pods. In
// between, the running pods whose ReplicaSet is gone stay the Deployment's workload: grouped
// under the ReplicaSet they named they would be a workload of their own (named after the
// ReplicaSet, running), which the records would keep and the API list.
func TestS4_PodsOfADeletedReplicaSetStayTheirDeploymentsWorkload(t *testing.T) {
	c := NewCache("arbiter")
	deploy := controllerRef("apps/v1", "Deployment", "serve", "d1")
	rs := controllerRef("apps/v1", "ReplicaSet", "serve-abc", "rs1")
	c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "Deployment", "serve", "d1", nil, nil)))
	c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "ReplicaSet", "serve-abc", "rs1", &deploy, nil)))
	for _, uid := range []string{"p1", "p2"} {
		p := gpuPod("serve-abc-"+uid, uid, 1, &rs)
		p.Spec.NodeName = "n1"
		c.UpsertPod(p)
	}
	workloads := func() []string {
		var out []string
		for _, w := range cycleView(c, t0, &Settings{}).Snapshot.Workloads {
			out = append(out, fmt.Sprintf("%s/%s:%d", w.Kind, w.UID, len(w.Pods)))
		}
		slices.Sort(out)
		return out
	}
	want := []string{"Deployment/d1:2"}
	for _, step := range []struct {
		what string
		do   func()
	}{
		{"with both owners", func() {}},
		{"after the Deployment is deleted", func() { c.DeleteOwner("d1") }},
		{"after its ReplicaSet is deleted too", func() { c.DeleteOwner("rs1") }},
	} {
		step.do()
		if d := cmp.Diff(want, workloads()); d != "" {
			t.Fatalf("%s (-want +got):\n%s", step.what, d)
		}
	}
	c.DeletePod("p1")
	c.DeletePod("p2")
	if d := cmp.Diff([]string(nil), workloads()); d != "" {
		t.Fatalf("after the pods are deleted (-want +got):\n%s", d)
	}
	// The links are bounded: only the last maxDeparted deleted owners keep theirs.
	for i := range maxDeparted + 10 {
		uid := fmt.Sprintf("rs-%d", i)
		c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "ReplicaSet", uid, uid, &deploy, nil)))
		c.DeleteOwner(types.UID(uid))
	}
	if n := len(c.departed); n != maxDeparted {
		t.Errorf("%d deleted owners' links kept, want the last %d", n, maxDeparted)
	}
}
