package kube

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/workload/native"
)

// What a distributed training is made as follows discovery: an indexed Job while the cluster
// serves no PyTorchJob, a PyTorchJob once training-operator's CRD is served. The answer is
// kept servedKindTTL: a CRD installed meanwhile is seen once that has passed, not before.
func TestDistributedMadeAs_FollowsDiscoveryKeptForAWhile(t *testing.T) {
	k := startKindsCluster(t)
	// The scheduler's informers sync before its first cycle; stopped before that, it says so.
	poll.Until(t, "the scheduler has run a cycle", time.Minute, func() bool { return k.sched.last.Load() != nil })
	now := time.Now()
	k.sched.served.now = func() time.Time { return now }
	w := k.sched.Workloads()
	madeAs := func() native.MadeAs {
		t.Helper()
		as, err := w.DistributedMadeAs(k.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return as
	}
	if diff := cmp.Diff(native.AsIndexedJob, madeAs()); diff != "" {
		t.Errorf("without the CRD (-want +got):\n%s", diff)
	}

	k.installCRD(t, "pytorchjobs.yaml")
	poll.UntilNil(t, "discovery serves kubeflow.org/v1 pytorchjobs", time.Minute, func() error {
		_, err := k.client.Discovery().ServerResourcesForGroupVersion("kubeflow.org/v1")
		return err
	})
	if diff := cmp.Diff(native.AsIndexedJob, madeAs()); diff != "" {
		t.Errorf("within %s of the last answer, the answer kept (-want +got):\n%s", servedKindTTL, diff)
	}
	now = now.Add(servedKindTTL)
	if diff := cmp.Diff(native.AsPyTorchJob, madeAs()); diff != "" {
		t.Errorf("once %s has passed, with the CRD served (-want +got):\n%s", servedKindTTL, diff)
	}
}
