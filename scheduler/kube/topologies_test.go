package kube

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/scheduler"
)

// topologyObject is a Topology of apiVersion named name with levels, as either project writes it.
func topologyObject(apiVersion, name string, levels ...string) *unstructured.Unstructured {
	ls := make([]any, len(levels))
	for i, l := range levels {
		ls[i] = map[string]any{"nodeLabel": l}
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": "Topology",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"levels": ls}}}
}

// TestS29_TopologiesOnTheLocalControlPlane: on a real API server, with Kueue's and KAI's
// Topology definitions (as the projects publish them) installed after Arbiter started, their
// objects are in the snapshot, KAI's before Kueue's; one of KAI's hides Kueue's of the same
// name until it is deleted; a Kueue Topology written at v1beta1 is read like one at v1beta2.
func TestS29_TopologiesOnTheLocalControlPlane(t *testing.T) {
	k := startKindsCluster(t)
	k.installCRD(t, "kueue-topologies.yaml")
	k.installCRD(t, "kai-topologies.yaml")
	kai := schema.GroupVersionResource{Group: "kai.scheduler", Version: "v1alpha1", Resource: "topologies"}
	kueueV1beta2 := schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "topologies"}
	kueueV1beta1 := schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta1", Resource: "topologies"}
	create := func(gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
		t.Helper()
		poll.UntilNil(t, gvr.String()+" is served", time.Minute, func() error {
			_, err := k.dyn.Resource(gvr).Create(k.ctx, u, metav1.CreateOptions{})
			return err
		})
	}
	create(kueueV1beta2, topologyObject("kueue.x-k8s.io/v1beta2", "racks", "topology.arbiter.dev/block", "topology.arbiter.dev/rack", "kubernetes.io/hostname"))
	create(kueueV1beta1, topologyObject("kueue.x-k8s.io/v1beta1", "blocks", "topology.arbiter.dev/block"))
	create(kai, topologyObject("kai.scheduler/v1alpha1", "racks", "topology.arbiter.dev/rack", "kubernetes.io/hostname"))

	inSnapshot := func(what string, want []scheduler.Topology) {
		t.Helper()
		poll.UntilNil(t, what, time.Minute, func() error {
			got := k.sched.cache.Snapshot(time.Now()).Snapshot.Topologies
			if d := cmp.Diff(want, got); d != "" {
				return fmt.Errorf("snapshot's topologies (-want +got):\n%s", d)
			}
			return nil
		})
	}
	inSnapshot("KAI's racks, then Kueue's blocks (its racks hidden by KAI's)", []scheduler.Topology{
		{Name: "racks", Levels: []string{"topology.arbiter.dev/rack", "kubernetes.io/hostname"}},
		{Name: "blocks", Levels: []string{"topology.arbiter.dev/block"}},
	})
	if err := k.dyn.Resource(kai).Delete(k.ctx, "racks", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	inSnapshot("Kueue's blocks and racks once KAI's racks is gone", []scheduler.Topology{
		{Name: "blocks", Levels: []string{"topology.arbiter.dev/block"}},
		{Name: "racks", Levels: []string{"topology.arbiter.dev/block", "topology.arbiter.dev/rack", "kubernetes.io/hostname"}},
	})
}

// TestS29_ArbiterTopologiesWinByName: a snapshot lists Arbiter's own topologies first, then the
// cluster's whose names they do not take, KAI's before Kueue's, each by name.
func TestS29_ArbiterTopologiesWinByName(t *testing.T) {
	c := NewCache("arbiter")
	c.UpsertTopology("kueue", topologyObject("kueue.x-k8s.io/v1beta2", "zones", "topology.kubernetes.io/zone"))
	c.UpsertTopology("kueue", topologyObject("kueue.x-k8s.io/v1beta2", "racks", "kueue.example/rack"))
	c.UpsertTopology("kai", topologyObject("kai.scheduler/v1alpha1", "racks", "kai.example/rack"))
	c.UpsertTopology("kai", topologyObject("kai.scheduler/v1alpha1", "default", "kai.example/block", "kai.example/rack"))
	c.UpsertTopology("kai", topologyObject("kai.scheduler/v1alpha1", "alpha", "kai.example/rack"))
	own := []scheduler.Topology{{Name: "default", Levels: []string{"topology.arbiter.dev/rack"}}}
	c.SetSettings(&Settings{Topologies: own})
	got := c.Snapshot(t0).Snapshot.Topologies
	want := []scheduler.Topology{
		{Name: "default", Levels: []string{"topology.arbiter.dev/rack"}}, // Arbiter's, over KAI's default
		{Name: "alpha", Levels: []string{"kai.example/rack"}},
		{Name: "racks", Levels: []string{"kai.example/rack"}}, // KAI's, over Kueue's racks
		{Name: "zones", Levels: []string{"topology.kubernetes.io/zone"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("snapshot's topologies (-want +got):\n%s", d)
	}
}

// TestS29_ClusterTopologiesThatCannotBeReadAreLeftOut: a Topology whose levels are not node
// label keys, repeat one, are none or too many is left out of the snapshot (and one that was in
// goes when it is changed so); the snapshot takes at most maxClusterTopologies of them.
func TestS29_ClusterTopologiesThatCannotBeReadAreLeftOut(t *testing.T) {
	c := NewCache("arbiter")
	c.UpsertTopology("kueue", topologyObject("kueue.x-k8s.io/v1beta2", "good", "topology.arbiter.dev/rack"))
	c.UpsertTopology("kueue", topologyObject("kueue.x-k8s.io/v1beta2", "changed-bad", "topology.arbiter.dev/rack"))
	tooMany := make([]string, maxTopologyLevels+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("level-%d", i)
	}
	for _, bad := range []*unstructured.Unstructured{
		topologyObject("kueue.x-k8s.io/v1beta2", "not-a-label", "not a label"),
		topologyObject("kueue.x-k8s.io/v1beta2", "repeated", "rack", "rack"),
		topologyObject("kueue.x-k8s.io/v1beta2", "none"),
		topologyObject("kueue.x-k8s.io/v1beta2", "too-many", tooMany...),
		topologyObject("kueue.x-k8s.io/v1beta2", "changed-bad", "example.com/"+strings.Repeat("x", 64)),
	} {
		c.UpsertTopology("kueue", bad)
	}
	want := []scheduler.Topology{{Name: "good", Levels: []string{"topology.arbiter.dev/rack"}}}
	if d := cmp.Diff(want, c.Snapshot(t0).Snapshot.Topologies); d != "" {
		t.Errorf("snapshot's topologies (-want +got):\n%s", d)
	}
	for i := range maxClusterTopologies + 10 {
		c.UpsertTopology("kai", topologyObject("kai.scheduler/v1alpha1", fmt.Sprintf("kai-%04d", i), "topology.arbiter.dev/rack"))
	}
	got := c.Snapshot(t0).Snapshot.Topologies
	if len(got) != maxClusterTopologies || got[0].Name != "kai-0000" || got[len(got)-1].Name != fmt.Sprintf("kai-%04d", maxClusterTopologies-1) {
		t.Errorf("%d cluster topologies taken (first %s, last %s); want the first %d of KAI's by name", len(got), got[0].Name, got[len(got)-1].Name, maxClusterTopologies)
	}
}
