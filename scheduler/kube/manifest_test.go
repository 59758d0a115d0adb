package kube

import (
	"testing"

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
