package kube

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/arbiterhq/arbiter/scheduler"
)

// readKind decodes a controller's object from testdata/kinds, as a dynamic informer delivers it.
func readKind(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	return readTestdata(t, filepath.Join("kinds", file))
}

// roleSummary is what a test reads of a role: its name, how many pods it makes and the GPUs
// each requests.
type roleSummary struct {
	Name string
	Pods int32
	GPUs int64
}

func summarise(roles []podRole) []roleSummary {
	var out []roleSummary
	for _, r := range roles {
		out = append(out, roleSummary{r.Name, r.Count, podRequests(&r.Template.Spec).GPUs})
	}
	return out
}

// TestS5_GangOfEachKindFromItsManifest: each kind's gang is computed from its own fields, its
// suspend switch is read, and the pods each role makes are known (S20 admits a suspended
// workload from them).
func TestS5_GangOfEachKindFromItsManifest(t *testing.T) {
	cases := []struct {
		file      string
		gang      int
		suspended bool
		roles     []roleSummary
	}{
		// master + workers
		{"pytorchjob.yaml", 4, true, []roleSummary{{"Master", 1, 1}, {"Worker", 3, 2}}},
		// launcher + workers, at training-operator's kubeflow.org/v1
		{"mpijob-v1.yaml", 3, false, []roleSummary{{"Launcher", 1, 0}, {"Worker", 2, 0}}},
		// every replicated job starts at once: Σ replicas × parallelism
		{"jobset.yaml", 1 + 3*4, true, []roleSummary{{"driver", 1, 0}, {"workers", 12, 1}}},
		// InOrder: the first replicated job, its Jobs' pods bounded by completions
		{"jobset-inorder.yaml", 2 * 2, false, []roleSummary{{"leader", 4, 0}}},
		// dependsOn: the replicated jobs that depend on none (the initializers)
		{"jobset-dependson.yaml", 2, false, []roleSummary{{"dataset-initializer", 1, 0}, {"model-initializer", 1, 0}}},
		// before its JobSet is known: the trainer's nodes
		{"trainjob.yaml", 2, true, nil},
		{"trainjob-jobset.yaml", 2, true, []roleSummary{{"node", 2, 1}}},
		// one group: the leader and three workers
		{"leaderworkerset.yaml", 4, false, nil},
		// head + each group's minReplicas × numOfHosts; a suspended one comes back with replicas
		{"raycluster.yaml", 1 + 1 + 2*2, true, []roleSummary{{"head", 1, 0}, {"workergroup", 1, 0}, {"gpu-hosts", 3 * 2, 1}}},
		{"rayjob.yaml", 2, true, []roleSummary{{"head", 1, 0}, {"small-group", 1, 0}}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			o := ownerFrom(readKind(t, tc.file))
			w := scheduler.Workload{Kind: o.Kind, Group: o.Group, Gang: o.Gang}
			if gang, _ := scheduler.ResolveGangSize(&w); gang != tc.gang {
				t.Errorf("gang %d, want %d (from %+v)", gang, tc.gang, o.Gang)
			}
			if o.Suspended != tc.suspended {
				t.Errorf("suspended %v, want %v", o.Suspended, tc.suspended)
			}
			if d := cmp.Diff(tc.roles, summarise(o.Roles)); d != "" {
				t.Errorf("roles (-want +got):\n%s", d)
			}
			if !scheduler.CanSuspend(o.Kind) && tc.suspended {
				t.Errorf("%s has a suspend switch Arbiter does not use", o.Kind)
			}
		})
	}
}

// TestS5_ARayWorkerGroupSuspendedOnItsOwnMakesNoPods: a worker group with its own suspend
// switch on counts neither in the cluster's gang nor in the pods it comes back with.
func TestS5_ARayWorkerGroupSuspendedOnItsOwnMakesNoPods(t *testing.T) {
	u := readKind(t, "raycluster.yaml")
	groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "workerGroupSpecs")
	groups[1].(map[string]any)["suspend"] = true
	if err := unstructured.SetNestedSlice(u.Object, groups, "spec", "workerGroupSpecs"); err != nil {
		t.Fatal(err)
	}
	o := ownerFrom(u)
	w := scheduler.Workload{Kind: o.Kind, Group: o.Group, Gang: o.Gang}
	if gang, _ := scheduler.ResolveGangSize(&w); gang != 2 {
		t.Errorf("gang %d, want the head and workergroup's one", gang)
	}
	if d := cmp.Diff([]roleSummary{{"head", 1, 0}, {"workergroup", 1, 0}}, summarise(o.Roles)); d != "" {
		t.Errorf("roles (-want +got):\n%s", d)
	}
}

// TestS20_ASuspendedWorkloadOfEveryKindIsAdmittedAgain: a workload Arbiter suspended has no
// pods; it is built from the pods its roles make (a TrainJob's from its JobSet's) and
// resumed once they fit.
func TestS20_ASuspendedWorkloadOfEveryKindIsAdmittedAgain(t *testing.T) {
	cases := []struct {
		files []string // the top owner first, then what it owns
		uid   string
		pods  int
		gpus  int64
	}{
		{[]string{"pytorchjob.yaml"}, "pytorch-uid", 4, 1 + 3*2},
		{[]string{"jobset.yaml"}, "jobset-uid", 13, 12},
		{[]string{"trainjob.yaml", "trainjob-jobset.yaml"}, "trainjob-uid", 2, 2},
		{[]string{"raycluster.yaml"}, "raycluster-uid", 8, 6},
		{[]string{"rayjob.yaml"}, "rayjob-uid", 2, 0},
	}
	for _, tc := range cases {
		t.Run(tc.files[0], func(t *testing.T) {
			c := NewCache("arbiter")
			c.UpsertNode(gpuNode("n1", 16))
			for i, file := range tc.files {
				u := readKind(t, file)
				if i == 0 {
					u.SetAnnotations(map[string]string{AnnotationSuspendedBy: "arbiter"})
				}
				c.UpsertOwner(ownerFrom(u))
			}
			view := cycleView(c, t0.Add(time.Hour), foreseeSettings())
			w, m := view.Workload(tc.uid)
			if w == nil {
				t.Fatalf("no workload %s in the snapshot: a suspended %s is never admitted again", tc.uid, tc.files[0])
			}
			var gpus int64
			for _, p := range w.Pods {
				gpus += p.Requests.GPUs
			}
			if w.Phase != scheduler.PhaseSuspended || len(w.Pods) != tc.pods || gpus != tc.gpus || !m.Suspendable {
				t.Errorf("workload %s, %d pods, %d GPUs, suspendable %v; want Suspended, %d pods, %d GPUs, suspendable",
					w.Phase, len(w.Pods), gpus, m.Suspendable, tc.pods, tc.gpus)
			}
			plan := view.Snapshot.Plan()
			if len(plan.Resumes) != 1 || plan.Resumes[0].Workload != tc.uid {
				t.Errorf("resumes %+v, want %s resumed; pending %+v", plan.Resumes, tc.uid, plan.Pending)
			}
		})
	}
}

// TestS5_ATrainJobsGangIsItsJobSetsFirstStage: a TrainJob's gang is its JobSet's first stage
// once the JobSet is known (the runtime's initializers run before its nodes), and the
// JobSet's pods are under the TrainJob.
func TestS5_ATrainJobsGangIsItsJobSetsFirstStage(t *testing.T) {
	c := NewCache("arbiter")
	train := readKind(t, "trainjob.yaml")
	c.UpsertOwner(ownerFrom(train))
	staged := readKind(t, "jobset-dependson.yaml")
	staged.SetOwnerReferences(readKind(t, "trainjob-jobset.yaml").GetOwnerReferences())
	c.UpsertOwner(ownerFrom(staged))
	job := controllerRef("jobset.x-k8s.io/v1alpha2", "JobSet", "with-initializers", "dependson-uid")
	c.UpsertPod(gpuPod("init-0", "p1", 0, &job))
	view := cycleView(c, t0.Add(time.Hour), foreseeSettings())
	w, _ := view.Workload("trainjob-uid")
	if w == nil || w.Kind != "TrainJob" {
		t.Fatalf("the pod is not grouped under its TrainJob: %+v", view.Snapshot.Workloads)
	}
	if gang, _ := scheduler.ResolveGangSize(w); gang != 2 {
		t.Errorf("gang %d, want the 2 initializers of the JobSet's first stage", gang)
	}
}

// TestS3_ASuspendedWorkloadOfAnotherSchedulerIsNotOurs: a suspended workload whose pods would
// name another scheduler (another Arbiter on the same cluster, say) is not one of this
// Arbiter's, as its pods would not be: it is neither admitted nor recorded here.
func TestS3_ASuspendedWorkloadOfAnotherSchedulerIsNotOurs(t *testing.T) {
	for _, files := range [][]string{{"pytorchjob.yaml"}, {"jobset.yaml"}, {"trainjob.yaml", "trainjob-jobset.yaml"}, {"raycluster.yaml"}} {
		t.Run(files[0], func(t *testing.T) {
			c := NewCache("another-arbiter")
			c.UpsertNode(gpuNode("n1", 16))
			for i, file := range files {
				u := readKind(t, file)
				if i == 0 {
					u.SetAnnotations(map[string]string{AnnotationSuspendedBy: "arbiter"})
				}
				c.UpsertOwner(ownerFrom(u))
			}
			if n := len(cycleView(c, t0.Add(time.Hour), foreseeSettings()).Snapshot.Workloads); n != 0 {
				t.Errorf("%d workloads from a suspended %s whose pods name scheduler arbiter, want none", n, files[0])
			}
		})
	}
}
