package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestS7_OneWarningPerUnknownNamePerWorkload: a priority name in neither the dictionary nor
// the aliases is one mistake however many places carry it: the workload's label and its pod's
// label naming it give one InvalidPriority warning, naming both places; two different unknown
// names are two mistakes. The same holds for an invalid preemptibility. A cycle, which
// resolves through its memo, reports what Resolve does.
func TestS7_OneWarningPerUnknownNamePerWorkload(t *testing.T) {
	same := map[string]string{LabelPriority: "ultra", LabelPreemptibility: "sometimes"}
	other := map[string]string{LabelPriority: "mega", LabelPreemptibility: "never"}
	job := func(uid string, ownerLabels, podLabels map[string]string) Workload {
		return Workload{UID: uid, Namespace: "ns", Name: uid, Kind: "Job", Group: "batch", Type: "Standard training", Labels: ownerLabels,
			Pods: []Pod{{UID: uid + "-pod", Namespace: "ns", Name: uid + "-0", Labels: podLabels, Requests: Resources{GPUs: 1}}}}
	}
	// A bare pod as a dry run sees it: built from its manifest, its pod is not yet itself.
	dryRunPod := Workload{UID: "uid-dry", Namespace: "ns", Name: "dry", Kind: "Pod", Type: "Standard training", Labels: same,
		Pods: []Pod{{UID: "uid-dry-0", Namespace: "ns", Name: "dry-0", Labels: same, Requests: Resources{GPUs: 1}}}}
	workloads := []Workload{job("uid-same", same, same), job("uid-two", same, other), dryRunPod}
	type got struct {
		Code    WarningCode
		Message string
	}
	want := map[string][]got{
		"uid-same": {
			{InvalidPriority, `Priority "ultra" in the workload's label priorityClassName and the pod's label priorityClassName is not in the priority dictionary; it is ignored. Use one of the dictionary's names, or one of KAI's and Run:ai's priority class names (train, build-preemptible, interactive-preemptible, build, inference).`},
			{InvalidPreemptibility, `Preemptibility "sometimes" in the workload's label and the pod's label kai.scheduler/preemptibility is not preemptible, non-preemptible or semi-preemptible; it is ignored.`},
		},
		"uid-two": {
			{InvalidPriority, `Priority "ultra" in the workload's label priorityClassName is not in the priority dictionary; it is ignored. Use one of the dictionary's names, or one of KAI's and Run:ai's priority class names (train, build-preemptible, interactive-preemptible, build, inference).`},
			{InvalidPriority, `Priority "mega" in the pod's label priorityClassName is not in the priority dictionary; it is ignored. Use one of the dictionary's names, or one of KAI's and Run:ai's priority class names (train, build-preemptible, interactive-preemptible, build, inference).`},
			{InvalidPreemptibility, `Preemptibility "sometimes" in the workload's label kai.scheduler/preemptibility is not preemptible, non-preemptible or semi-preemptible; it is ignored.`},
			{InvalidPreemptibility, `Preemptibility "never" in the pod's label kai.scheduler/preemptibility is not preemptible, non-preemptible or semi-preemptible; it is ignored.`},
		},
		"uid-dry": {
			{InvalidPriority, `Priority "ultra" in the workload's label priorityClassName and the pod's label priorityClassName is not in the priority dictionary; it is ignored. Use one of the dictionary's names, or one of KAI's and Run:ai's priority class names (train, build-preemptible, interactive-preemptible, build, inference).`},
			{InvalidPreemptibility, `Preemptibility "sometimes" in the workload's label and the pod's label kai.scheduler/preemptibility is not preemptible, non-preemptible or semi-preemptible; it is ignored.`},
		},
	}
	byWorkload := func(ws []Warning) map[string][]got {
		out := map[string][]got{}
		for _, w := range ws {
			out[w.Workload] = append(out[w.Workload], got{w.Code, w.Message})
		}
		return out
	}

	cat := NewCatalog(seededPriorities(), seededCategories(), seededTypes())
	var resolved []Warning
	for _, w := range workloads {
		resolved = append(resolved, cat.Resolve(&w, Policy{}).Warnings...)
	}
	if diff := cmp.Diff(want, byWorkload(resolved)); diff != "" {
		t.Errorf("Resolve's warnings (-want +got):\n%s", diff)
	}

	s := snap().gpuNodes("n", 1, 8).project(project("p", 8)).s
	for _, w := range workloads {
		w.Project = "p"
		w.PrepareLookups()
		s.Workloads = append(s.Workloads, w)
	}
	if diff := cmp.Diff(want, byWorkload(s.Plan().Warnings), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("a cycle's warnings (-want +got):\n%s", diff)
	}
}

// TestS7_S8_KAIPriorityClassAliases: KAI's and older Run:ai's priority class names, read
// where a priority is read (the top owner's label, a bare pod's own label, the pod's
// spec.priorityClassName), resolve to their dictionary entry and to KAI's preemptibility for
// the class, which beats the type's and the category's (a bare pod is Deploy, non-preemptible;
// a training Job is Train, preemptible). An explicit preemptibility label still wins. The
// resolution names the alias, and a cycle gives it to the plan.
func TestS7_S8_KAIPriorityClassAliases(t *testing.T) {
	aliases := []struct {
		name, entry    string
		preemptibility Preemptibility
	}{
		{"train", "low", Preemptible},
		{"build-preemptible", "medium", Preemptible},
		{"interactive-preemptible", "medium", Preemptible},
		{"build", "high", NonPreemptible},
		{"inference", "very-high", NonPreemptible},
	}
	var listed []string
	for _, a := range PriorityAliases() {
		listed = append(listed, a.Name+"="+a.Entry+"/"+string(a.Preemptibility))
	}
	var want []string
	for _, a := range aliases {
		want = append(want, a.name+"="+a.entry+"/"+string(a.preemptibility))
	}
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("PriorityAliases (-want +got):\n%s", diff)
	}

	barePod := func(l map[string]string) *Workload {
		return &Workload{UID: "pod-uid", Kind: "Pod", Type: "Pod", Labels: l, Pods: []Pod{{UID: "pod-uid", Labels: l}}}
	}
	trainingJob := func(l map[string]string) *Workload {
		return &Workload{UID: "job-uid", Kind: "Job", Group: "batch", Type: "Standard training", Labels: l, Pods: []Pod{{UID: "job-pod"}}}
	}
	specOnly := func(class string) *Workload {
		return &Workload{UID: "job-uid", Kind: "Job", Group: "batch", Type: "Standard training", Pods: []Pod{{UID: "job-pod", PriorityClassName: class}}}
	}
	cat := NewCatalog(seededPriorities(), seededCategories(), seededTypes())
	for _, a := range aliases {
		entry, _ := cat.Priority(a.entry)
		for _, explicit := range []Preemptibility{"", Preemptible, NonPreemptible} {
			wantPreemptibility := a.preemptibility
			l := map[string]string{LabelPriority: a.name}
			if explicit != "" {
				wantPreemptibility = explicit
				l[LabelPreemptibility] = string(explicit)
			}
			cases := map[string]*Workload{"on a bare pod": barePod(l), "on the top owner": trainingJob(l)}
			if explicit == "" {
				cases["in the pod's spec.priorityClassName"] = specOnly(a.name)
			}
			for where, w := range cases {
				t.Run(a.name+" "+where+" preemptibility label "+string(explicit), func(t *testing.T) {
					want := Resolution{Priority: entry, PriorityAlias: a.name, Preemptibility: wantPreemptibility}
					if diff := cmp.Diff(want, cat.Resolve(w, Policy{}), cmpopts.EquateEmpty(),
						cmpopts.IgnoreFields(Resolution{}, "PriorityFrom", "PreemptibilityFrom")); diff != "" {
						t.Errorf("resolution (-want +got):\n%s", diff)
					}
				})
			}
		}
	}

	// A dictionary entry named explicitly is no alias; the dictionary's own name wins.
	if r := cat.Resolve(barePod(map[string]string{LabelPriority: "high"}), Policy{}); r.PriorityAlias != "" {
		t.Errorf("a dictionary name resolved as alias %q", r.PriorityAlias)
	}

	// A project that forbids changing preemptibility keeps its default, and says why.
	r := cat.Resolve(trainingJob(map[string]string{LabelPriority: "build"}), Policy{ForbidPreemptibilityChange: true})
	if r.Priority.Name != "high" || r.Preemptibility != Preemptible || len(r.Warnings) != 1 || r.Warnings[0].Code != PreemptibilityChangeNotAllowed {
		t.Errorf("build under a policy forbidding preemptibility changes = %+v, want high, preemptible, PreemptibilityChangeNotAllowed", r)
	}
	// A project that forbids changing priority ignores the alias, and its preemptibility too.
	r = cat.Resolve(trainingJob(map[string]string{LabelPriority: "build"}), Policy{ForbidPriorityChange: true})
	if r.Priority.Name != "low" || r.PriorityAlias != "" || r.Preemptibility != Preemptible || len(r.Warnings) != 1 || r.Warnings[0].Code != PriorityChangeNotAllowed {
		t.Errorf("build under a policy forbidding priority changes = %+v, want low, preemptible, PriorityChangeNotAllowed", r)
	}

	// A cycle: the plan carries the entry, KAI's preemptibility and the alias.
	s := snap().gpuNodes("n", 1, 8).project(project("p", 8)).s
	for _, name := range []string{"build", "train"} {
		w := *barePod(map[string]string{LabelPriority: name})
		w.UID, w.Namespace, w.Name, w.Project = name, "ns", name, "p"
		w.Pods = []Pod{{UID: name, Namespace: "ns", Name: name, Labels: w.Labels, Requests: Resources{GPUs: 1}}}
		w.PrepareLookups()
		s.Workloads = append(s.Workloads, w)
	}
	var running []string
	for _, rw := range s.Plan().Running {
		running = append(running, rw.Workload+": "+rw.Priority.Name+", "+string(rw.Preemptibility)+", alias "+rw.PriorityAlias)
	}
	if diff := cmp.Diff([]string{"build: high, non-preemptible, alias build", "train: low, preemptible, alias train"}, running); diff != "" {
		t.Errorf("running workloads (-want +got):\n%s", diff)
	}
}
