package native

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// TestRequestOfRoundTrip: what RequestOf reads back from a workload's objects parses into the
// same workload, for each kind; priority and preemptibility come back only when they were asked
// for; the pools come back as their node labels.
func TestRequestOfRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		edit func(*Request)
		as   MadeAs // a distributed training's object
	}{
		{Training, func(r *Request) {
			r.Spec.Command, r.Spec.Args = `python -c 'print("a b")' it\'s`, `--path "/data/my set" \$HOME ''`
			r.Spec.Compute.CPUCoreRequest, r.Spec.Compute.CPUMemoryRequest = ptr.To(2.5), "4Gi"
			r.Spec.EnvironmentVariables = []EnvironmentVariable{{Name: "EPOCHS", Value: "3"}, {Name: "EMPTY"}}
			r.Spec.PriorityClass, r.Spec.Preemptibility = "high", "non-preemptible"
		}, MadeAs{}},
		{Workspace, func(r *Request) { r.Spec.Command = "sleep infinity" }, MadeAs{}},
		{Distributed, func(r *Request) { r.Spec.NumWorkers, r.Spec.Preemptibility = ptr.To(4), "semi-preemptible" }, AsIndexedJob},
		{Distributed, func(r *Request) {
			r.Spec.NumWorkers, r.Spec.PriorityClass, r.Spec.Command = ptr.To(3), "high", "torchrun train.py"
		}, AsPyTorchJob},
		{Inference, func(r *Request) {
			r.Spec.ServingPort, r.Spec.Autoscaling = &ServingPort{Container: 8000}, &Autoscaling{MinReplicas: ptr.To(3)}
		}, MadeAs{}},
	} {
		t.Run(tc.kind.Path+" "+tc.as.Object, func(t *testing.T) {
			req := base()
			tc.edit(&req)
			w, err := Parse(tc.kind, req)
			if err != nil {
				t.Fatal(err)
			}
			w.Namespace, w.Project, w.As = "team-a", "a", tc.as
			w.Pools = []Pool{{Name: "a100", LabelKey: "gpu", LabelValue: "a100"}}
			back, pools := RequestOf(w.Objects())
			back.Name, back.ProjectID, back.Spec.NodePools = req.Name, req.ProjectID, req.Spec.NodePools
			again, err := Parse(tc.kind, back)
			if err != nil {
				t.Fatalf("the request read back is refused: %v (%+v)", err, back.Spec)
			}
			again.Namespace, again.Project, again.Pools, again.As = w.Namespace, w.Project, w.Pools, tc.as
			if diff := cmp.Diff(w, again, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("round trip (-submitted +cloned):\n%s", diff)
			}
			if len(pools) != 1 || pools[0].LabelKey != "gpu" || pools[0].LabelValue != "a100" {
				t.Errorf("pools = %+v", pools)
			}
			if req.Spec.PriorityClass == "" && back.Spec.PriorityClass != "" {
				t.Errorf("a default priority came back as %q", back.Spec.PriorityClass)
			}
		})
	}
}

func TestCloneName(t *testing.T) {
	for name, want := range map[string]string{"train": "train-2", "train-2": "train-3", "train-09": "train-09-2", "run-v1-0": "run-v1-0-2",
		"a234567890123456789012345678901234567890123456789012345678": "a2345678901234567890123456789012345678901234567890123456-2"} {
		if got := CloneName(name); got != want {
			t.Errorf("CloneName(%s) = %s, want %s", name, got, want)
		}
	}
}
