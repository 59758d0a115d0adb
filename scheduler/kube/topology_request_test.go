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
