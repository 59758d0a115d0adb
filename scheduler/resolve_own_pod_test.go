package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestABarePodsLabelIsReadOnce: a bare pod is its own top owner, so its labels are the
// workload's labels and the pod's labels at once. An invalid value is one mistake and is
// reported once, by Resolve and by a cycle (which resolves through its memo) alike; a Job
// whose own label and whose pod's label are invalid in two different ways has two.
func TestABarePodsLabelIsReadOnce(t *testing.T) {
	labels := map[string]string{LabelPriority: "ultra", LabelPreemptibility: "sometimes"}
	bare := Workload{UID: "uid-bare", Namespace: "ns", Name: "bare", Kind: "Pod", Type: "Standard training", Labels: labels,
		Pods: []Pod{{UID: "uid-bare", Namespace: "ns", Name: "bare", Labels: labels, Requests: Resources{GPUs: 1}}}}
	podLabels := map[string]string{LabelPriority: "mega", LabelPreemptibility: "never"}
	job := Workload{UID: "uid-job", Namespace: "ns", Name: "job", Kind: "Job", Group: "batch", Type: "Standard training", Labels: labels,
		Pods: []Pod{{UID: "uid-job-pod", Namespace: "ns", Name: "job-x", Labels: podLabels, Requests: Resources{GPUs: 1}}}}
	codes := func(ws []Warning) map[string][]WarningCode {
		out := map[string][]WarningCode{}
		for _, w := range ws {
			out[w.Workload] = append(out[w.Workload], w.Code)
		}
		return out
	}
	want := map[string][]WarningCode{
		"uid-bare": {InvalidPriority, InvalidPreemptibility},
		"uid-job":  {InvalidPriority, InvalidPriority, InvalidPreemptibility, InvalidPreemptibility},
	}

	cat := NewCatalog(seededPriorities(), seededCategories(), seededTypes())
	var resolved []Warning
	for _, w := range []Workload{bare, job} {
		resolved = append(resolved, cat.Resolve(&w, Policy{}).Warnings...)
	}
	if diff := cmp.Diff(want, codes(resolved)); diff != "" {
		t.Errorf("Resolve's warnings (-want +got):\n%s", diff)
	}

	for _, prepared := range []bool{false, true} {
		s := snap().gpuNodes("n", 1, 8).project(project("p", 8)).s
		for _, w := range []Workload{bare, job} {
			w.Project = "p"
			if prepared { // as the Kubernetes cache builds them
				w.PrepareLookups()
			}
			s.Workloads = append(s.Workloads, w)
		}
		if diff := cmp.Diff(want, codes(s.Plan().Warnings)); diff != "" {
			t.Errorf("a cycle's warnings, labels looked up ahead %v (-want +got):\n%s", prepared, diff)
		}
	}
}
