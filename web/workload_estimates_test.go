package web_test

import (
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/views"
)

// A waiting workload's estimated start is in the API, the Workloads table and the workload
// page; one not estimated yet says so; a running one has none.
func TestWorkloadEstimatedStart(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	a := getAs[views.Workload](t, f.srv, "/api/v1/workloads/"+f.trainA)
	if a.EstimatedStartAt == nil || !a.EstimatedStartAt.Equal(f.at(90)) || a.EstimateBasis != trainABasis {
		t.Errorf("train-a: estimatedStartAt %v basis %q, want %v %q", a.EstimatedStartAt, a.EstimateBasis, f.at(90), trainABasis)
	}
	beta := getAs[views.Workload](t, f.srv, "/api/v1/workloads/"+f.betaJob)
	if beta.EstimatedStartAt != nil || !strings.HasPrefix(beta.EstimateBasis, "No estimate yet") {
		t.Errorf("beta-job, not estimated: %v %q, want null and why", beta.EstimatedStartAt, beta.EstimateBasis)
	}
	b := getAs[views.Workload](t, f.srv, "/api/v1/workloads/"+f.trainB)
	if b.EstimatedStartAt != nil || b.EstimateBasis != "" {
		t.Errorf("train-b runs: %v %q, want neither", b.EstimatedStartAt, b.EstimateBasis)
	}

	page := string(get(t, f.srv, "/workloads").body)
	if !strings.Contains(page, "Est. start") || !strings.Contains(page, "Mar 1 10:30 UTC") {
		t.Errorf("the Workloads table shows no estimated start column with train-a's (Mar 1 10:30 UTC)")
	}
	story := string(get(t, f.srv, "/workloads/"+f.trainA).body)
	if !strings.Contains(story, "Estimated start:") || !strings.Contains(story, "Mar 1 10:30 UTC") || !strings.Contains(story, "team-alpha/train-b") {
		t.Errorf("the workload page does not show the estimated start and its basis")
	}
}
