package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/native"
)

// A dry run of a distributed training made as a PyTorchJob foresees the pods its controller
// will make: the master and each worker, each with the GPUs asked, as one gang (S5, from the
// replicas), of the workload type its label names (S4), in the namespace's project (S6).
func TestDryRun_APyTorchJobIsForeseenAsItsMasterAndWorkers(t *testing.T) {
	settings := foreseeSettings()
	settings.WorkloadTypes = append(settings.WorkloadTypes, scheduler.WorkloadType{Name: "Distributed training", Category: "Train"})
	w, err := native.Parse(native.Distributed, native.Request{Name: "ddp", ProjectID: "p",
		Spec: native.Spec{Image: "pytorch:2", NumWorkers: ptr.To(3), Compute: native.Compute{GPUDevicesRequest: ptr.To(2)}}})
	if err != nil {
		t.Fatal(err)
	}
	w.Namespace, w.SchedulerName, w.As = "ns", "arbiter", native.AsPyTorchJob

	c := NewCache("arbiter")
	c.SetSettings(settings)
	o, err := proposedOwner(w.Objects().PyTorchJob, t0)
	if err != nil {
		t.Fatal(err)
	}
	proposed := c.proposedWorkload(o, t0)
	type seen struct {
		Kind, Group, Type, Project string
		Gang                       scheduler.GangSpec
		Pods                       []string
		GPUs                       []int64
	}
	got := seen{Kind: proposed.Kind, Group: proposed.Group, Type: proposed.Type, Project: proposed.Project, Gang: proposed.Gang}
	for _, p := range proposed.Pods {
		got.Pods = append(got.Pods, p.Name)
		got.GPUs = append(got.GPUs, p.Requests.GPUs)
	}
	want := seen{Kind: "PyTorchJob", Group: "kubeflow.org", Type: "Distributed training", Project: "team",
		Gang: scheduler.GangSpec{Replicas: []int32{1, 3}},
		Pods: []string{"ddp-master-0", "ddp-worker-0", "ddp-worker-1", "ddp-worker-2"}, GPUs: []int64{2, 2, 2, 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("foreseen workload (-want +got):\n%s", diff)
	}
}
