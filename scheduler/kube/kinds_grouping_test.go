package kube

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

// TestS5_AnUnknownKindIsGroupedUnderItsOwner: pods whose top owner is of a kind Arbiter does
// not watch are one workload under that owner (walked up through the owners Arbiter caches),
// all-or-nothing over the pods that exist, or over arbiter.dev/min-members on its pods; the
// workload says which rule grouped it.
func TestS5_AnUnknownKindIsGroupedUnderItsOwner(t *testing.T) {
	gadget := controllerRef("example.com/v1", "Gadget", "g", "g1")
	rs := controllerRef("apps/v1", "ReplicaSet", "g-abc", "rs1")
	pods := func(c *Cache, n int, minMembers string) {
		for i := range n {
			p := gpuPod("g-abc-"+strconv.Itoa(i), "p"+strconv.Itoa(i), 1, &rs)
			if minMembers != "" {
				p.Annotations = map[string]string{scheduler.AnnotationMinMembers: minMembers}
			}
			c.UpsertPod(p)
		}
	}
	cases := []struct {
		name       string
		gpus       int64
		minMembers string
		gang       int
		bound      int
		groupedBy  string
	}{
		{"the pods that exist, all or nothing", 2, "", 3, 0,
			"Grouped by owner Gadget/g (kind not known: gang = the 3 pods that exist)."},
		{"the pods that exist, placed together", 3, "", 3, 3,
			"Grouped by owner Gadget/g (kind not known: gang = the 3 pods that exist)."},
		{"min-members on its pods", 2, "2", 2, 0, // the gang is 2, but all 3 pending pods are placed as one
			"Grouped by owner Gadget/g (kind not known: gang from arbiter.dev/min-members on its pods)."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache("arbiter")
			c.UpsertNode(gpuNode("n1", tc.gpus))
			c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "ReplicaSet", "g-abc", "rs1", &gadget, nil)))
			pods(c, 3, tc.minMembers)
			view := cycleView(c, t0.Add(time.Hour), foreseeSettings())
			w, m := view.Workload("g1")
			if w == nil || w.Kind != "Gadget" || len(w.Pods) != 3 {
				t.Fatalf("the pods are not one workload under their Gadget (%d workloads)", len(view.Snapshot.Workloads))
			}
			if gang, _ := scheduler.ResolveGangSize(w); gang != tc.gang {
				t.Errorf("gang %d, want %d", gang, tc.gang)
			}
			if m.GroupedBy != tc.groupedBy || m.Suspendable {
				t.Errorf("grouped by %q, suspendable %v; want %q, not suspendable", m.GroupedBy, m.Suspendable, tc.groupedBy)
			}
			if plan := view.Snapshot.Plan(); len(plan.Binds) != tc.bound {
				t.Errorf("%d pods bound, want %d", len(plan.Binds), tc.bound)
			}
		})
	}
}

// TestS4_AKnownKindNotCachedYetIsNotTheFallback: pending pods whose Job the cache has not seen
// yet are not grouped by the fallback rule (their gang would be the pods that exist): they
// wait for the Job (TestS4_PodBeforeItsOwners), and then are its workload, with its gang.
func TestS4_AKnownKindNotCachedYetIsNotTheFallback(t *testing.T) {
	c := NewCache("arbiter")
	job := controllerRef("batch/v1", "Job", "train", "j1")
	c.UpsertPod(gpuPod("train-0", "p1", 1, &job))
	c.UpsertPod(gpuPod("train-1", "p2", 1, &job))
	if w, _ := cycleView(c, t0.Add(time.Hour), foreseeSettings()).Workload("j1"); w != nil {
		t.Fatalf("the pods make a workload before their Job is seen: %+v", w)
	}
	c.UpsertOwner(ownerFrom(ownerObj("batch/v1", "Job", "train", "j1", nil, map[string]any{"parallelism": int64(2)})))
	w, m := cycleView(c, t0.Add(time.Hour), foreseeSettings()).Workload("j1")
	if w == nil {
		t.Fatal("no workload under the Job once it is seen")
	}
	if gang, _ := scheduler.ResolveGangSize(w); gang != 2 || len(w.Pods) != 2 || m.GroupedBy != "Grouped by owner Job/train." {
		t.Errorf("gang %d of %d pods, grouped by %q; want 2 of 2, by owner Job/train", gang, len(w.Pods), m.GroupedBy)
	}
}

// TestS5_ALeaderWorkerSetsGroupsAreGangsOfOneWorkload: the workers' StatefulSet is owned by
// their group's leader pod; walking through it, every pod of every group is under the
// LeaderWorkerSet, even when the workers come before their leader, and each group of size
// pods is placed whole.
func TestS5_ALeaderWorkerSetsGroupsAreGangsOfOneWorkload(t *testing.T) {
	c := NewCache("arbiter")
	c.UpsertNode(gpuNode("n1", 6))
	lwsObj := readKind(t, "leaderworkerset.yaml")
	c.UpsertOwner(ownerFrom(lwsObj))
	lws := controllerRef("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", lwsObj.GetName(), string(lwsObj.GetUID()))
	c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "StatefulSet", "sample", "leader-sts", &lws, nil)))
	leaderSts := controllerRef("apps/v1", "StatefulSet", "sample", "leader-sts")
	labelled := func(p *corev1.Pod, group string) *corev1.Pod {
		p.Labels = map[string]string{labelLWSGroupIndex: group}
		return p
	}
	for g := range 2 {
		group := strconv.Itoa(g)
		leaderName, leaderUID := "sample-"+group, "leader-"+group
		leader := controllerRef("v1", "Pod", leaderName, leaderUID)
		workerSts := controllerRef("apps/v1", "StatefulSet", leaderName, "workers-"+group)
		// the workers' StatefulSet and pods reach the cache before their leader
		c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "StatefulSet", leaderName, "workers-"+group, &leader, nil)))
		for i := 1; i < 4; i++ {
			c.UpsertPod(labelled(gpuPod(leaderName+"-"+strconv.Itoa(i), "w"+group+strconv.Itoa(i), 1, &workerSts), group))
		}
		c.UpsertPod(labelled(gpuPod(leaderName, leaderUID, 1, &leaderSts), group))
	}
	view := cycleView(c, t0.Add(time.Hour), foreseeSettings())
	if n := len(view.Snapshot.Workloads); n != 1 {
		var names []string
		for _, w := range view.Snapshot.Workloads {
			names = append(names, w.Kind+"/"+w.Name)
		}
		t.Fatalf("workloads %v, want the LeaderWorkerSet alone", names)
	}
	w, _ := view.Workload(string(lwsObj.GetUID()))
	if w == nil || len(w.Pods) != 8 {
		t.Fatalf("the LeaderWorkerSet's workload is %+v, want its 8 pods", w)
	}
	if gang, _ := scheduler.ResolveGangSize(w); gang != 4 {
		t.Errorf("gang %d, want a group of 4", gang)
	}
	plan := view.Snapshot.Plan()
	groups := map[string]int{}
	for _, b := range plan.Binds {
		for _, p := range w.Pods {
			if p.UID == b.Pod.UID {
				groups[p.GangGroup]++
			}
		}
	}
	if len(groups) != 1 || len(plan.Binds) != 4 {
		t.Errorf("bound %d pods in groups %v; want one whole group of 4 (6 GPUs hold one group)", len(plan.Binds), groups)
	}
}

// TestS4_ALeaderPodsComingAndGoingRegroupsItsWorkers: whichever order a LeaderWorkerSet's
// leader pod comes and goes in, the workloads kept as events arrive are those a cache built
// afresh from the same objects has.
func TestS4_ALeaderPodsComingAndGoingRegroupsItsWorkers(t *testing.T) {
	lwsObj := readKind(t, "leaderworkerset.yaml")
	lws := controllerRef("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", lwsObj.GetName(), string(lwsObj.GetUID()))
	leaderSts := controllerRef("apps/v1", "StatefulSet", "sample", "leader-sts")
	leaderRef := controllerRef("v1", "Pod", "sample-0", "leader-0")
	workerSts := controllerRef("apps/v1", "StatefulSet", "sample-0", "workers-0")
	state := &clusterState{nodes: map[string]*corev1.Node{}, owners: map[types.UID]*owner{}, pods: map[types.UID]*corev1.Pod{},
		departed: map[types.UID]*metav1.OwnerReference{}}
	c := NewCache("arbiter")
	putOwner := func(o *owner) { state.owners[o.UID] = o; c.UpsertOwner(o) }
	putPod := func(p *corev1.Pod) { state.pods[p.UID] = p; c.UpsertPod(p) }
	workloads := func(c *Cache) []string {
		var out []string
		for _, w := range cycleView(c, t0.Add(time.Hour), foreseeSettings()).Snapshot.Workloads {
			out = append(out, w.UID+" "+w.Kind+"/"+w.Name+":"+strconv.Itoa(len(w.Pods)))
		}
		return out
	}
	same := func(step string) {
		t.Helper()
		if d := cmp.Diff(workloads(state.fresh()), workloads(c)); d != "" {
			t.Errorf("%s: kept as events arrived (-fresh +kept):\n%s", step, d)
		}
	}
	putOwner(ownerFrom(lwsObj))
	putOwner(ownerFrom(ownerObj("apps/v1", "StatefulSet", "sample", "leader-sts", &lws, nil)))
	putOwner(ownerFrom(ownerObj("apps/v1", "StatefulSet", "sample-0", "workers-0", &leaderRef, nil)))
	for i := 1; i < 4; i++ {
		putPod(gpuPod("sample-0-"+strconv.Itoa(i), "w"+strconv.Itoa(i), 1, &workerSts))
	}
	same("workers before their leader")
	putPod(gpuPod("sample-0", "leader-0", 1, &leaderSts))
	same("the leader came")
	if got := workloads(c); !cmp.Equal(got, []string{"lws-uid LeaderWorkerSet/leaderworkerset-sample:4"}) {
		t.Errorf("workloads %v, want the LeaderWorkerSet with its 4 pods", got)
	}
	delete(state.pods, "leader-0")
	c.DeletePod("leader-0")
	same("the leader went")
}

// TestS5_WorkersWaitForTheirLeaderPod: a LeaderWorkerSet's workers whose leader pod is not in
// the cache (not seen yet, or deleted while its group is made again) are not placed as a gang
// of the pods that exist under the leader's reference: they wait for the leader, and with it
// are under the LeaderWorkerSet, whose group is placed whole or not at all.
func TestS5_WorkersWaitForTheirLeaderPod(t *testing.T) {
	c := NewCache("arbiter")
	c.UpsertNode(gpuNode("n1", 2)) // room for the two workers, not for the group of 3
	lwsObj := readKind(t, "leaderworkerset.yaml")
	c.UpsertOwner(ownerFrom(lwsObj))
	lws := controllerRef("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", lwsObj.GetName(), string(lwsObj.GetUID()))
	c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "StatefulSet", "sample", "leader-sts", &lws, nil)))
	leaderSts := controllerRef("apps/v1", "StatefulSet", "sample", "leader-sts")
	leader := controllerRef("v1", "Pod", "sample-0", "leader-0")
	c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "StatefulSet", "sample-0", "workers-0", &leader, nil)))
	workerSts := controllerRef("apps/v1", "StatefulSet", "sample-0", "workers-0")
	for i := 1; i < 3; i++ {
		c.UpsertPod(gpuPod("sample-0-"+strconv.Itoa(i), "w"+strconv.Itoa(i), 1, &workerSts))
	}
	if plan := cycleView(c, t0.Add(time.Hour), foreseeSettings()).Snapshot.Plan(); len(plan.Binds) != 0 {
		t.Fatalf("%d workers bound without their leader, want none", len(plan.Binds))
	}
	c.UpsertPod(gpuPod("sample-0", "leader-0", 1, &leaderSts))
	view := cycleView(c, t0.Add(time.Hour), foreseeSettings())
	w, _ := view.Workload(string(lwsObj.GetUID()))
	if w == nil || len(w.Pods) != 3 {
		t.Fatalf("the LeaderWorkerSet's workload is %+v, want its leader and 2 workers", w)
	}
	if plan := view.Snapshot.Plan(); len(plan.Binds) != 0 {
		t.Errorf("%d pods of the group bound on 2 GPUs, want none", len(plan.Binds))
	}
}
