package kube

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/arbiterhq/arbiter/workloads"
)

// TestManifestKindsAreScheduled: every kind Workloads V2 creates is a bare Pod or a kind the
// scheduler watches as an owner, at the same version and resource, so that what a manifest
// creates is what Arbiter schedules.
func TestManifestKindsAreScheduled(t *testing.T) {
	for _, k := range workloads.ManifestKinds {
		if k.Kind == "Pod" && k.Group == "" {
			continue
		}
		watched := false
		for _, o := range watchedOwners {
			if o.Kind == k.Kind && o.GVR == k.GVR() {
				watched = true
			}
		}
		if !watched {
			t.Errorf("manifest kind %s %s (%s) is not a watched owner", k.APIVersion(), k.Kind, k.Resource)
		}
	}
}

// TestDryRunReadsAManifestsObject: the dry run reads a Workloads V2 manifest's object as it
// reads a native submission's: its kind, its pod template and how many pods it makes; a kind
// whose pods it cannot count from the object is refused.
func TestDryRunReadsAManifestsObject(t *testing.T) {
	sts := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "kv", "namespace": "team"},
		"spec": map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "kv", "image": "kv"}}}}}}}
	o, err := proposedOwner(sts, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if o.Kind != "StatefulSet" || o.APIVersion != "apps/v1" || o.TemplateCount != 3 || o.Template == nil || o.Template.Spec.Containers[0].Name != "kv" {
		t.Errorf("the StatefulSet read as %+v", o)
	}
	ray := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": map[string]any{"namespace": "team"}}}
	if _, err := proposedOwner(ray, time.Now()); err == nil {
		t.Error("a RayCluster's dry run was not refused")
	}
}
