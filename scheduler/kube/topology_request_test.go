package kube

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/arbiterhq/arbiter/scheduler"
)

// TestS29_RequestsReadInKueuesAndKAIsSpelling: a workload's topology request is read from
// KAI's annotations on its top owner and from Kueue's on its pods' template, per pod set where
// its pods make several; a value that is no label key asks for nothing and says so.
func TestS29_RequestsReadInKueuesAndKAIsSpelling(t *testing.T) {
	type want struct {
		topology *scheduler.TopologyRequest
		sets     []scheduler.PodSetTopology
		problems []string
	}
	cases := []struct {
		name  string
		kind  string
		owner map[string]string
		pod   func(i int) (labels, annotations map[string]string)
		want  want
	}{
		{"KAI's, on the top owner", "Job",
			map[string]string{AnnotationKAITopology: "dc", AnnotationKAIRequired: "rack"},
			func(int) (map[string]string, map[string]string) { return nil, nil },
			want{topology: &scheduler.TopologyRequest{Topology: "dc", Level: "rack", Required: true,
				Source: "the workload's annotation " + AnnotationKAIRequired}}},
		{"KAI's required and preferred together: the preferred tried inside the required", "Job",
			map[string]string{AnnotationKAIRequired: "block", AnnotationKAIPreferred: "rack"},
			func(int) (map[string]string, map[string]string) { return nil, nil },
			want{topology: &scheduler.TopologyRequest{Level: "block", Required: true, Preferred: "rack",
				Source: "the workload's annotation " + AnnotationKAIRequired}}},
		{"Kueue's, on the pod template: the whole Job", "Job", nil,
			func(int) (map[string]string, map[string]string) {
				return nil, map[string]string{AnnotationKueuePreferred: "cloud.provider.com/topology-block"}
			},
			want{topology: &scheduler.TopologyRequest{Level: "cloud.provider.com/topology-block",
				Source: "the pod template's annotation " + AnnotationKueuePreferred}}},
		{"Kueue's, per replicated job of a JobSet", "JobSet", nil,
			func(i int) (map[string]string, map[string]string) {
				set := map[bool]string{true: "driver", false: "workers"}[i == 0]
				ann := map[string]string{AnnotationKueueRequired: "rack"}
				if set == "driver" {
					ann = map[string]string{AnnotationKueuePreferred: "block"}
				}
				return map[string]string{"jobset.sigs.k8s.io/replicatedjob-name": set}, ann
			},
			want{sets: []scheduler.PodSetTopology{
				{PodSet: "driver", Request: scheduler.TopologyRequest{Level: "block", Source: "the pod template's annotation " + AnnotationKueuePreferred}},
				{PodSet: "workers", Request: scheduler.TopologyRequest{Level: "rack", Required: true, Source: "the pod template's annotation " + AnnotationKueueRequired}},
			}}},
		{"a value that is no label key asks for nothing, once however many pods carry it", "Job", nil,
			func(int) (map[string]string, map[string]string) {
				return nil, map[string]string{AnnotationKueueRequired: "one rack please"}
			},
			want{problems: []string{`Annotation kueue.x-k8s.io/podset-required-topology="one rack please" on the pod template's is not a node label key; it is ignored.`}}},
		{"KAI's topology without a level asks for nothing", "Job",
			map[string]string{AnnotationKAITopology: "dc"},
			func(int) (map[string]string, map[string]string) { return nil, nil },
			want{problems: []string{`Annotation kai.scheduler/topology="dc" on the workload's names a topology but no level (kai.scheduler/topology-required-placement or kai.scheduler/topology-preferred-placement); it asks for nothing.`}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache("arbiter")
			c.UpsertNode(gpuNode("n1", 8))
			apiVersion := map[string]string{"Job": "batch/v1", "JobSet": "jobset.x-k8s.io/v1alpha2"}[tc.kind]
			o := ownerObj(apiVersion, tc.kind, "train", "o1", nil, map[string]any{})
			o.SetAnnotations(tc.owner)
			c.UpsertOwner(ownerFrom(o))
			ref := controllerRef(apiVersion, tc.kind, "train", "o1")
			for i := range 3 {
				p := gpuPod("train-"+strconv.Itoa(i), "p"+strconv.Itoa(i), 1, &ref)
				p.Labels, p.Annotations = tc.pod(i)
				c.UpsertPod(p)
			}
			w, _ := cycleView(c, t0.Add(time.Hour), foreseeSettings()).Workload("o1")
			if w == nil {
				t.Fatal("no workload")
			}
			got := want{topology: w.Topology, sets: w.PodSetTopologies, problems: w.TopologyProblems}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestS29_ARequiredRackJobStartsOnlyWhenOneRackHasRoom: a Job asking, in KAI's spelling on its
// owner, for one rack waits while the pool's free GPUs (12 for its 8) lie in two racks, and
// starts inside the rack that frees up. Through the cache: the annotation read, the nodes' labels, the plan.
func TestS29_ARequiredRackJobStartsOnlyWhenOneRackHasRoom(t *testing.T) {
	c := NewCache("arbiter")
	for i, rack := range []string{"r1", "r1", "r2", "r2"} {
		n := gpuNode("n"+strconv.Itoa(i+1), 4)
		n.Labels = map[string]string{"rack": rack}
		c.UpsertNode(n)
	}
	other := controllerRef("batch/v1", "Job", "other", "j0")
	c.UpsertOwner(ownerFrom(ownerObj("batch/v1", "Job", "other", "j0", nil, map[string]any{"parallelism": int64(2)})))
	for i, node := range []string{"n1", "n3"} {
		p := gpuPod("other-"+strconv.Itoa(i), "o"+strconv.Itoa(i), 2, &other)
		p.Spec.NodeName = node
		c.UpsertPod(p)
	}
	job := controllerRef("batch/v1", "Job", "train", "j1")
	o := ownerObj("batch/v1", "Job", "train", "j1", nil, map[string]any{"parallelism": int64(4)})
	o.SetAnnotations(map[string]string{AnnotationKAIRequired: "rack"})
	c.UpsertOwner(ownerFrom(o))
	for i := range 4 {
		c.UpsertPod(gpuPod("train-"+strconv.Itoa(i), "t"+strconv.Itoa(i), 2, &job))
	}
	settings := foreseeSettings()
	settings.Projects[0].Quotas["default"] = scheduler.Quota{Deserved: 16, Limit: scheduler.NoLimit, OverQuotaWeight: 2}

	plan := cycleView(c, t0.Add(time.Hour), settings).Snapshot.Plan()
	if len(plan.Binds) != 0 || len(plan.Pending) != 1 || plan.Pending[0].Reason != scheduler.TopologyUnsatisfiable {
		t.Fatalf("with 6 GPUs free in each rack the 8-GPU job starts or waits for something else: binds %v, pending %+v", plan.Binds, plan.Pending)
	}
	want := "Needs 8 GPUs in one rack; the emptiest rack has 6 free (r1). It starts when one rack of pool default has room."
	if plan.Pending[0].Message != want {
		t.Errorf("message %q, want %q", plan.Pending[0].Message, want)
	}

	c.DeletePod("o1") // the other Job's pod in r2 ends
	plan = cycleView(c, t0.Add(time.Hour+time.Minute), settings).Snapshot.Plan()
	var nodes []string
	for _, b := range plan.Binds {
		nodes = append(nodes, b.Node)
	}
	if diff := cmp.Diff([]string{"n3", "n3", "n4", "n4"}, nodes); diff != "" {
		t.Errorf("the job's pods (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]scheduler.TopologyPlacement{{Workload: "j1", Required: true, Level: "rack", Domain: "r2"}}, plan.Topology); diff != "" {
		t.Errorf("where it landed (-want +got):\n%s", diff)
	}
}
