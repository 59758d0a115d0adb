package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Where a workload's priority and preemptibility came from, step by step of S7 and S8, and the
// sentence a person reads about it.

func fromCatalog() *Catalog {
	types := append(seededTypes(),
		WorkloadType{Name: "Tuned", Category: "Train", Priority: "medium-high", Preemptibility: NonPreemptible})
	return NewCatalog(seededPriorities(), seededCategories(), types)
}

// fromNames are the names of a Job of project vision, for the sentences.
func fromNames(r Resolution, typ string) Names {
	n := Names{Kind: "Job", Project: "vision", Type: typ, Alias: r.PriorityAlias, Priority: r.Priority.Name}
	switch typ {
	case "Standard training", "Tuned":
		n.Category = "Train"
	case "Workspace":
		n.Category = "Build"
	}
	return n
}

func TestS7_WhereThePriorityCameFrom(t *testing.T) {
	cat := fromCatalog()
	locked := Policy{ForbidPriorityChange: true}
	cases := []struct {
		name     string
		w        *Workload
		policy   Policy
		want     From
		sentence string
	}{
		{"the workload's label", resolveCase(map[string]string{LabelPriority: "high"}, map[string]string{LabelPriority: "medium"}, "", "Standard training"),
			Policy{}, From{Source: SourceLabel}, "asked for with the label priorityClassName on the Job"},
		{"its pod's label", resolveCase(nil, map[string]string{LabelPriority: "medium"}, "", "Standard training"),
			Policy{}, From{Source: SourcePodLabel}, "asked for with the label priorityClassName on its pod"},
		{"its pod's spec.priorityClassName", resolveCase(nil, nil, "very-high", "Standard training"),
			Policy{}, From{Source: SourcePriorityClassName}, "asked for with spec.priorityClassName on its pod"},
		{"an alias of KAI's, in the workload's label", resolveCase(map[string]string{LabelPriority: "build"}, nil, "", "Standard training"),
			Policy{}, From{Source: SourceLabel}, "asked for with the label priorityClassName on the Job (KAI's and Run:ai's class name build, read as high)"},
		{"the project's default", resolveCase(nil, nil, "", "Standard training"),
			Policy{DefaultPriority: "medium"}, From{Source: SourceProjectDefault}, "project vision's default"},
		{"the workload type's default", resolveCase(nil, nil, "", "Tuned"),
			Policy{}, From{Source: SourceTypeDefault}, "the default of workload type Tuned"},
		{"the category's default", resolveCase(nil, nil, "", "Workspace"),
			Policy{}, From{Source: SourceCategoryDefault}, "the default of category Build"},
		{"the cluster's default", resolveCase(nil, nil, "", "SPOTRequest"),
			Policy{}, From{Source: SourceClusterDefault}, "the cluster's default"},
		{"a label clamped to the project's maximum", resolveCase(map[string]string{LabelPriority: "very-high"}, nil, "", "Standard training"),
			Policy{MaxPriority: "high"}, From{Source: SourceLabel, Clamped: ClampedToMax},
			"asked for with the label priorityClassName on the Job, clamped to project vision's maxPriority high"},
		{"a default clamped to the project's minimum", resolveCase(nil, nil, "", "Standard training"),
			Policy{MinPriority: "medium-low"}, From{Source: SourceCategoryDefault, Clamped: ClampedToMin},
			"the default of category Train, clamped to project vision's minPriority medium-low"},
		{"a label ignored: the project does not allow changing priority", resolveCase(map[string]string{LabelPriority: "high"}, nil, "", "Standard training"),
			locked, From{Source: SourceCategoryDefault, Ignored: SourceLabel},
			"the default of category Train; the label priorityClassName on the Job was ignored: project vision does not allow changing priority"},
		{"a pod's class name ignored: the project does not allow changing priority", resolveCase(nil, nil, "very-high", "Standard training"),
			Policy{ForbidPriorityChange: true, DefaultPriority: "medium"}, From{Source: SourceProjectDefault, Ignored: SourcePriorityClassName},
			"project vision's default; spec.priorityClassName on its pod was ignored: project vision does not allow changing priority"},
		{"a label naming what the locked project gives anyway is asked for (S9)", resolveCase(map[string]string{LabelPriority: "low"}, nil, "", "Standard training"),
			locked, From{Source: SourceLabel}, "asked for with the label priorityClassName on the Job"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cat.Resolve(tc.w, tc.policy)
			if diff := cmp.Diff(tc.want, r.PriorityFrom); diff != "" {
				t.Errorf("priority %s from (-want +got):\n%s", r.Priority.Name, diff)
			}
			if got := r.PriorityFrom.PrioritySentence(fromNames(r, tc.w.Type)); got != tc.sentence {
				t.Errorf("sentence %q, want %q", got, tc.sentence)
			}
		})
	}
}

func TestS8_WhereThePreemptibilityCameFrom(t *testing.T) {
	cat := fromCatalog()
	locked := Policy{ForbidPreemptibilityChange: true}
	cases := []struct {
		name     string
		w        *Workload
		policy   Policy
		want     From
		sentence string
	}{
		{"the workload's label", resolveCase(map[string]string{LabelPreemptibility: "non-preemptible"}, nil, "", "Standard training"),
			Policy{}, From{Source: SourceLabel}, "asked for with the label kai.scheduler/preemptibility on the Job"},
		{"its pod's label", resolveCase(nil, map[string]string{LabelPreemptibility: "non-preemptible"}, "", "Standard training"),
			Policy{}, From{Source: SourcePodLabel}, "asked for with the label kai.scheduler/preemptibility on its pod"},
		{"KAI's for the class its priority was read as", resolveCase(map[string]string{LabelPriority: "build"}, nil, "", "Standard training"),
			Policy{}, From{Source: SourceAlias}, "KAI's preemptibility for the priority class build"},
		{"the workload type's", resolveCase(nil, nil, "", "Tuned"),
			Policy{}, From{Source: SourceTypeDefault}, "the default of workload type Tuned"},
		{"the category's", resolveCase(nil, nil, "", "Workspace"),
			Policy{}, From{Source: SourceCategoryDefault}, "the default of category Build"},
		{"its priority's value", resolveCase(map[string]string{LabelPriority: "high"}, nil, "", "SPOTRequest"),
			Policy{}, From{Source: SourcePriorityValue}, "from its priority high: preemptible below value 100"},
		{"a label ignored: the project does not allow changing preemptibility", resolveCase(map[string]string{LabelPreemptibility: "non-preemptible"}, nil, "", "Standard training"),
			locked, From{Source: SourceCategoryDefault, Ignored: SourceLabel},
			"the default of category Train; the label kai.scheduler/preemptibility on the Job was ignored: project vision does not allow changing preemptibility"},
		{"an alias's preemptibility ignored: the project does not allow changing preemptibility", resolveCase(map[string]string{LabelPriority: "build"}, nil, "", "Standard training"),
			locked, From{Source: SourceCategoryDefault, Ignored: SourceAlias},
			"the default of category Train; the preemptibility of the priority class build was ignored: project vision does not allow changing preemptibility"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cat.Resolve(tc.w, tc.policy)
			if diff := cmp.Diff(tc.want, r.PreemptibilityFrom); diff != "" {
				t.Errorf("preemptibility %s from (-want +got):\n%s", r.Preemptibility, diff)
			}
			if got := r.PreemptibilityFrom.PreemptibilitySentence(fromNames(r, tc.w.Type)); got != tc.sentence {
				t.Errorf("sentence %q, want %q", got, tc.sentence)
			}
		})
	}
}

// The plan carries where each value came from, as Resolve gives it.
func TestS7_S8_ThePlanSaysWhereEachValueCameFrom(t *testing.T) {
	s := snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(
		wl("asked").in("p").prio("high").on(1, "n1"), wl("waits").in("p")).build()
	p := s.Plan()
	if len(p.Running) != 1 || len(p.Pending) != 1 {
		t.Fatalf("plan: running %+v, pending %+v; want one of each", p.Running, p.Pending)
	}
	if diff := cmp.Diff(From{Source: SourceLabel}, p.Running[0].PriorityFrom); diff != "" {
		t.Errorf("running workload's priority from (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(From{Source: SourceCategoryDefault}, p.Pending[0].PriorityFrom); diff != "" {
		t.Errorf("pending workload's priority from (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(From{Source: SourceCategoryDefault}, p.Pending[0].PreemptibilityFrom); diff != "" {
		t.Errorf("pending workload's preemptibility from (-want +got):\n%s", diff)
	}
}
