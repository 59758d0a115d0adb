package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/store"
)

// The tests of S29 on the local control plane. Each uses four nodes of 8 GPUs: devcluster
// puts them in two racks of two nodes (16 GPUs a rack), both in one block.

const (
	kueueRequired = "kueue.x-k8s.io/podset-required-topology"
	kaiPreferred  = "kai.scheduler/topology-preferred-placement"
)

// onNode pins a Job's pods to the i-th node of the test's pool.
func (e *env) onNode(i int) func(*batchv1.Job) {
	name := devcluster.Pool{Name: e.pool.Name}.NodeName(i)
	return func(j *batchv1.Job) {
		j.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelHostname: name}
	}
}

// podTemplateAnnotation annotates a Job's pod template, where Kueue reads a pod set's request.
func podTemplateAnnotation(key, value string) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		if j.Spec.Template.Annotations == nil {
			j.Spec.Template.Annotations = map[string]string{}
		}
		j.Spec.Template.Annotations[key] = value
	}
}

// racksTopology gives the test's pool Arbiter's own topology of devcluster's levels (block,
// rack, hostname), as an administrator does through the network-topologies API.
func (e *env) racksTopology() {
	e.t.Helper()
	topology, err := e.store.CreateNetworkTopology(e.ctx, "racks", devcluster.TopologyLevels, admin)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.store.UpdateNodePool(e.ctx, e.pool.ID, store.NodePoolUpdate{NetworkTopology: opt(topology.ID)}, admin); err != nil {
		e.t.Fatal(err)
	}
}

// racksOf lists the racks a Job's bound pods are on, each once, sorted.
func (e *env) racksOf(namespace, job string) []string {
	e.t.Helper()
	pool := devcluster.Pool{Name: e.pool.Name, Nodes: 4}
	rackOf := map[string]string{}
	for i := range pool.Nodes {
		rackOf[pool.NodeName(i)] = pool.Rack(i)
	}
	var racks []string
	for _, p := range e.jobPods(namespace, job) {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && !slices.Contains(racks, rackOf[p.Spec.NodeName]) {
			racks = append(racks, rackOf[p.Spec.NodeName])
		}
	}
	slices.Sort(racks)
	return racks
}

// podNames lists the names of a Job's pods that are bound and not going away.
func (e *env) podNames(namespace, job string) []string {
	var names []string
	for _, p := range e.jobPods(namespace, job) {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return names
}

// TestS29_RequiredRackStartsOnlyWhenOneRackHasRoom: a 16-pod Job asking for one rack in
// Kueue's spelling on its pod template waits with TopologyUnsatisfiable while each rack has 12
// GPUs free (24 in the pool), its sentence naming the level and the emptiest rack; when the
// work in one rack ends it starts there, all 16 pods in that rack.
func TestS29_RequiredRackStartsOnlyWhenOneRackHasRoom(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4, 8)
	e.racksTopology()
	ns := e.project("train", 32, store.PolicyUpdate{})
	steady := labels("high", "non-preemptible") // nothing evicts them: only their end frees a rack
	e.job(jobSpec{name: "in-rack-0", namespace: ns, pods: 4, labels: steady}, e.onNode(0))
	e.job(jobSpec{name: "in-rack-1", namespace: ns, pods: 4, labels: steady}, e.onNode(2))
	e.eventually("four GPUs of each rack are taken", time.Minute, func() bool {
		return e.running(ns, "in-rack-0") == 4 && e.running(ns, "in-rack-1") == 4
	})

	e.job(jobSpec{name: "sixteen", namespace: ns, pods: 16}, podTemplateAnnotation(kueueRequired, devcluster.LabelTopologyRack))
	want := "Needs 16 GPUs in one rack (" + devcluster.LabelTopologyRack + "); the emptiest rack has 12 free ("
	e.eventually("the Job waits for one rack", time.Minute, func() bool {
		r, msg := e.pendingReason(ns, "sixteen")
		return r == "TopologyUnsatisfiable" && strings.HasPrefix(msg, want)
	})
	if n := e.running(ns, "sixteen"); n != 0 {
		t.Fatalf("%d of the Job's pods run while no rack has 16 GPUs free", n)
	}

	if err := e.client.BatchV1().Jobs(ns).Delete(e.ctx, "in-rack-0", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the Job starts once rack 0 is free", 2*time.Minute, func() bool { return e.running(ns, "sixteen") == 16 })
	if got, want := e.racksOf(ns, "sixteen"), []string{e.pool.Name + "-rack-0"}; !slices.Equal(got, want) {
		t.Errorf("the Job's pods are in racks %v, want all in %v", got, want)
	}
}

// TestS29_PreferredRackSpreadsWhenNoRackFits: a 16-pod Job preferring one rack in KAI's
// spelling on the Job itself, by a node label no topology lists, starts at once when no rack
// has 16 GPUs free but the pool has: its pods spread over both racks, and it never waits
// for topology.
func TestS29_PreferredRackSpreadsWhenNoRackFits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4, 8)
	ns := e.project("train", 32, store.PolicyUpdate{})
	steady := labels("high", "non-preemptible")
	e.job(jobSpec{name: "in-rack-0", namespace: ns, pods: 4, labels: steady}, e.onNode(0))
	e.job(jobSpec{name: "in-rack-1", namespace: ns, pods: 4, labels: steady}, e.onNode(2))
	e.eventually("four GPUs of each rack are taken", time.Minute, func() bool {
		return e.running(ns, "in-rack-0") == 4 && e.running(ns, "in-rack-1") == 4
	})

	e.job(jobSpec{name: "sixteen", namespace: ns, pods: 16, annotations: map[string]string{kaiPreferred: devcluster.LabelTopologyRack}})
	e.eventually("the Job runs whole", time.Minute, func() bool {
		if r, msg := e.pendingReason(ns, "sixteen"); r == "TopologyUnsatisfiable" {
			t.Fatalf("a preferred Job waits for topology: %s", msg)
		}
		return e.running(ns, "sixteen") == 16
	})
	if got, want := e.racksOf(ns, "sixteen"), []string{e.pool.Name + "-rack-0", e.pool.Name + "-rack-1"}; !slices.Equal(got, want) {
		t.Errorf("the Job's pods are in racks %v, want spread over %v", got, want)
	}
}

// TestS29_ReclaimFreesOneRackForARequiredJob: a project with no deserved quota borrows all 32
// GPUs with four preemptible Jobs, one a node, created alternating between the racks; the
// owner of 16 deserved GPUs submits 16 pods that require one rack. Reclaim evicts the two
// borrowed Jobs of one rack and the owner's Job starts there; the borrowed Jobs of the other
// rack keep their pods (S19: nothing is evicted that the Job does not then use).
func TestS29_ReclaimFreesOneRackForARequiredJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4, 8)
	e.racksTopology()
	borrower := e.project("borrower", 0, store.PolicyUpdate{})
	owner := e.project("owner", 16, store.PolicyUpdate{})
	pool := devcluster.Pool{Name: e.pool.Name}
	order := []int{0, 2, 1, 3} // alternating racks

	borrowed := map[int]string{}
	for _, i := range order {
		borrowed[i] = fmt.Sprintf("borrowed-on-%d", i)
		e.job(jobSpec{name: borrowed[i], namespace: borrower, pods: 8, labels: labels("low", "preemptible")}, e.onNode(i))
	}
	before := map[int][]string{}
	e.eventually("the borrower takes all 32 GPUs", 2*time.Minute, func() bool {
		for _, i := range order {
			if e.running(borrower, borrowed[i]) != 8 {
				return false
			}
		}
		return true
	})
	for _, i := range order {
		before[i] = e.podNames(borrower, borrowed[i])
	}

	e.job(jobSpec{name: "sixteen", namespace: owner, pods: 16}, podTemplateAnnotation(kueueRequired, devcluster.LabelTopologyRack))
	e.eventually("the owner's Job runs", 2*time.Minute, func() bool { return e.running(owner, "sixteen") == 16 })
	racks := e.racksOf(owner, "sixteen")
	if len(racks) != 1 {
		t.Fatalf("the owner's Job is in racks %v, want one", racks)
	}
	for _, i := range order {
		events := e.events(borrower, borrowed[i])
		reclaimed := hasEvent(events, "Preempted: Preempted by "+owner+"/sixteen under S17")
		switch inRack := pool.Rack(i) == racks[0]; {
		case inRack && !reclaimed:
			t.Errorf("%s, in the rack the Job went to, was not reclaimed: %s", borrowed[i], fmtEvents(events))
		case !inRack && reclaimed:
			t.Errorf("%s, in the other rack, was reclaimed although the Job did not use its GPUs: %s", borrowed[i], fmtEvents(events))
		case !inRack && !slices.Equal(e.podNames(borrower, borrowed[i]), before[i]):
			t.Errorf("%s, in the other rack, runs pods %v, not its own %v", borrowed[i], e.podNames(borrower, borrowed[i]), before[i])
		}
	}
}
