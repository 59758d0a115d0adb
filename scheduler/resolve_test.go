package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func int32p(v int32) *int32 { return &v }

func TestS5_GangSize(t *testing.T) {
	cases := []struct {
		name string
		w    Workload
		want int
	}{
		{"bare pod", Workload{Kind: "Pod"}, 1},
		{"annotation wins", Workload{Kind: "PyTorchJob", Annotations: map[string]string{AnnotationMinMembers: "3"},
			Gang: GangSpec{Replicas: []int32{1, 7}}}, 3},
		{"bad annotation is ignored", Workload{Kind: "Pod", Annotations: map[string]string{AnnotationMinMembers: "x"}}, 1},
		{"job parallelism", Workload{Kind: "Job", Group: "batch", Gang: GangSpec{Parallelism: int32p(4)}}, 4},
		{"job bounded by remaining completions", Workload{Kind: "Job", Group: "batch",
			Gang: GangSpec{Parallelism: int32p(4), Completions: int32p(5), Succeeded: 3}}, 2},
		{"kubeflow sums replicas", Workload{Kind: "PyTorchJob", Gang: GangSpec{Replicas: []int32{1, 3}}}, 4},
		{"ray head and min workers", Workload{Kind: "RayCluster", Gang: GangSpec{Replicas: []int32{1, 2, 2}}}, 5},
		{"leader worker set group", Workload{Kind: "LeaderWorkerSet", Gang: GangSpec{GroupSize: 4}}, 4},
		{"native distributed", Workload{Kind: "TrainingWorkload", Type: "Distributed training", Gang: GangSpec{Replicas: []int32{6}}}, 6},
		{"deployment pods on their own", Workload{Kind: "Deployment", Group: "apps", Gang: GangSpec{Replicas: []int32{3}}}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := ResolveGangSize(&tc.w); got != tc.want {
				t.Errorf("gang = %d, want %d", got, tc.want)
			}
		})
	}

	// An incomplete gang waits; a complete one is placed whole.
	runRuleCases(t, []ruleCase{
		{"incomplete gang waits", snap().gpuNodes("n", 1, 8).project(project("p", 8)).wl(wl("g").in("p").gang(3).pods(2)),
			Plan{Pending: []PendingWorkload{pend("g", "p", GangIncomplete, 1)}}},
		{"complete gang is placed", snap().gpuNodes("n", 1, 8).project(project("p", 8)).wl(wl("g").in("p").gang(2).pods(2)),
			Plan{Binds: []Bind{bind("g-0", "n1"), bind("g-1", "n1")}}},
	})
}

func resolveCase(labels map[string]string, podLabels map[string]string, spec, typ string) *Workload {
	w := &Workload{UID: "u", Type: typ, Labels: labels, Pods: []Pod{{Labels: podLabels, PriorityClassName: spec}}}
	return w
}

func TestS7_Priority(t *testing.T) {
	cat := NewCatalog(seededPriorities(), seededCategories(), seededTypes())
	p := func(name string) Priority { pr, _ := cat.Priority(name); return pr }
	cases := []struct {
		name     string
		w        *Workload
		policy   Policy
		want     Priority
		warnings []WarningCode
	}{
		{"owner label first", resolveCase(map[string]string{LabelPriority: "medium"}, map[string]string{LabelPriority: "high"}, "very-high", "Standard training"),
			Policy{}, p("medium"), nil},
		{"pod label second", resolveCase(nil, map[string]string{LabelPriority: "high"}, "very-high", "Standard training"), Policy{}, p("high"), nil},
		{"spec priority class if in dictionary", resolveCase(nil, nil, "very-high", "Standard training"), Policy{}, p("very-high"), nil},
		{"spec priority class outside dictionary is skipped silently", resolveCase(nil, nil, "system-node-critical", "Standard training"), Policy{}, p("low"), nil},
		{"invalid label skipped with warning", resolveCase(map[string]string{LabelPriority: "urgent"}, nil, "", "Standard training"),
			Policy{}, p("low"), []WarningCode{InvalidPriority}},
		{"project default before type", resolveCase(nil, nil, "", "Standard training"), Policy{DefaultPriority: "medium"}, p("medium"), nil},
		{"type priority before category", resolveCase(nil, nil, "", "Tuned"), Policy{}, p("medium-high"), nil},
		{"category default", resolveCase(nil, nil, "", "Workspace"), Policy{}, p("high"), nil},
		{"no category: cluster default", resolveCase(nil, nil, "", "SPOTRequest"), Policy{}, p("low"), nil},
		{"unknown type: cluster default", resolveCase(nil, nil, "", "Nope"), Policy{}, p("low"), nil},
		{"change not allowed", resolveCase(map[string]string{LabelPriority: "high"}, nil, "", "Standard training"),
			Policy{ForbidPriorityChange: true}, p("low"), []WarningCode{PriorityChangeNotAllowed}},
		// S9: an explicit label equal to what the policy gives changes nothing, so a project that
		// forbids changes takes it without a warning.
		{"change not allowed: a label naming the policy's own priority is no change", resolveCase(map[string]string{LabelPriority: "medium"}, nil, "", "Standard training"),
			Policy{ForbidPriorityChange: true, DefaultPriority: "medium"}, p("medium"), nil},
		{"clamped to maximum", resolveCase(map[string]string{LabelPriority: "very-high"}, nil, "", "Standard training"),
			Policy{MaxPriority: "medium"}, p("medium"), []WarningCode{PriorityClamped}},
		{"clamped to minimum", resolveCase(nil, nil, "", "Standard training"),
			Policy{MinPriority: "medium-low"}, p("medium-low"), []WarningCode{PriorityClamped}},
	}
	cat = NewCatalog(seededPriorities(), seededCategories(),
		append(seededTypes(), WorkloadType{Name: "Tuned", Category: "Train", Priority: "medium-high"}))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings := cat.ResolvePriority(tc.w, tc.policy)
			var codes []WarningCode
			for _, w := range warnings {
				codes = append(codes, w.Code)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("priority (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.warnings, codes, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestS8_Preemptibility(t *testing.T) {
	types := append(seededTypes(), WorkloadType{Name: "Sticky training", Category: "Train", Preemptibility: NonPreemptible})
	cat := NewCatalog(seededPriorities(), seededCategories(), types)
	cases := []struct {
		name     string
		w        *Workload
		want     Preemptibility
		warnings int
		policy   Policy
	}{
		{"owner label", resolveCase(map[string]string{LabelPreemptibility: "non-preemptible"}, map[string]string{LabelPreemptibility: "preemptible"}, "", "Standard training"), NonPreemptible, 0, Policy{}},
		{"pod label", resolveCase(nil, map[string]string{LabelPreemptibility: "non-preemptible"}, "", "Standard training"), NonPreemptible, 0, Policy{}},
		{"invalid label skipped", resolveCase(map[string]string{LabelPreemptibility: "maybe"}, nil, "", "Workspace"), NonPreemptible, 1, Policy{}},
		{"type override", resolveCase(nil, nil, "", "Sticky training"), NonPreemptible, 0, Policy{}},
		{"category default", resolveCase(nil, nil, "", "Standard training"), Preemptible, 0, Policy{}},
		{"derived from low priority", resolveCase(nil, nil, "", "SPOTRequest"), Preemptible, 0, Policy{}},
		{"derived from high priority", resolveCase(map[string]string{LabelPriority: "high"}, nil, "", "SPOTRequest"), NonPreemptible, 0, Policy{}},
	}
	forbid := Policy{ForbidPreemptibilityChange: true}
	cases = append(cases, []struct {
		name     string
		w        *Workload
		want     Preemptibility
		warnings int
		policy   Policy
	}{
		{"policy forbids: owner label ignored, type applies", resolveCase(map[string]string{LabelPreemptibility: "preemptible"}, nil, "", "Sticky training"), NonPreemptible, 1, forbid},
		{"policy forbids: pod label ignored, category applies", resolveCase(nil, map[string]string{LabelPreemptibility: "non-preemptible"}, "", "Standard training"), Preemptible, 1, forbid},
		{"policy forbids: no label, no warning", resolveCase(nil, nil, "", "Standard training"), Preemptible, 0, forbid},
		{"policy forbids: a label naming the type's own is no change (S9)", resolveCase(map[string]string{LabelPreemptibility: "non-preemptible"}, nil, "", "Sticky training"), NonPreemptible, 0, forbid},
	}...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cat.Resolve(tc.w, tc.policy)
			if r.Preemptibility != tc.want || len(r.Warnings) != tc.warnings {
				t.Errorf("got %s with %d warnings, want %s with %d", r.Preemptibility, len(r.Warnings), tc.want, tc.warnings)
			}
		})
	}

	// S2: a running workload's preemptibility follows its type at once: the same running
	// workload is reclaimable or not depending on its type today.
	for _, tc := range []struct {
		typ  string
		want []Eviction
	}{{"Standard training", []Eviction{evict("borrower", "b", "owner", RuleReclaim, 1)}}, {"Sticky training", nil}} {
		s := snap().node(node("n1").gpus(2)).project(project("a", 1), project("b", 1)).wl(
			wl("b0").in("b").np().on(1, "n1"),
			wl("borrower").typ(tc.typ).in("b").on(2, "n1"),
			wl("owner").in("a"))
		s.s.WorkloadTypes = types
		got := s.build().Plan()
		if diff := cmp.Diff(tc.want, got.Evictions, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("type %s: evictions (-want +got):\n%s", tc.typ, diff)
		}
	}
}
