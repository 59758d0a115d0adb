package web_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
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
	// beta-job waits and is not estimated yet: the next pass estimates it, so the table says
	// so rather than that it cannot be told
	if strings.Contains(page, ">unknown<") || !strings.Contains(page, ">estimating<") {
		t.Errorf("the Workloads table does not say that beta-job, not yet estimated, is being estimated")
	}
	story := string(get(t, f.srv, "/workloads/"+f.trainA).body)
	if !strings.Contains(story, "Estimated start:") || !strings.Contains(story, "Mar 1 10:30 UTC") || !strings.Contains(story, "team-alpha/train-b") {
		t.Errorf("the workload page does not show the estimated start and its basis")
	}
}

// The estimates are the records': another replica, which makes no estimate of its own,
// answers the same. A workload its owner stopped says so, and no later pass's estimate
// takes that away; once it is back in the cluster's active set (a record from a cycle), its
// estimate is to come. One that runs has none.
func TestEstimatesAreTheRecords(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	ctx := context.Background()
	d := deps(f.st)
	d.Workloads, d.Estimating = f.st, true
	standby := httptest.NewServer(web.New(d))
	t.Cleanup(standby.Close)
	signIn(standby, newAPIKey(t, f.st, "admin", "system", ""))
	if diff := cmp.Diff(getAs[views.Workload](t, f.srv, "/api/v1/workloads/"+f.trainA), getAs[views.Workload](t, standby, "/api/v1/workloads/"+f.trainA), pendingSeconds); diff != "" {
		t.Errorf("the other replica answers train-a otherwise (-this +other):\n%s", diff)
	}

	// beta-job is stopped by its owner; a pass (from a snapshot of before) estimates it, and
	// the next takes its estimate away: it still says it was stopped.
	if err := f.st.StopWorkloads(ctx, []string{f.betaJob}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []store.WorkloadEstimate{{UID: f.betaJob, At: ptr.To(f.at(60)), Basis: "Simulated."}, {UID: f.betaJob}} {
		if err := f.st.RecordEstimates(ctx, []store.WorkloadEstimate{e}); err != nil {
			t.Fatal(err)
		}
	}
	beta := getAs[views.Workload](t, standby, "/api/v1/workloads/"+f.betaJob)
	if beta.Phase != "Suspended" || beta.EstimatedStartAt != nil || beta.EstimateBasis != store.OwnerStoppedBasis {
		t.Errorf("beta-job stopped by its owner: %s %v %q, want Suspended, null and %q", beta.Phase, beta.EstimatedStartAt, beta.EstimateBasis, store.OwnerStoppedBasis)
	}
	// Run again: the scheduler records it Pending, and its estimate is to come.
	rec, err := f.st.WorkloadRecord(ctx, f.betaJob)
	if err != nil {
		t.Fatal(err)
	}
	rec.Phase = "Pending"
	if err := f.st.RecordWorkloads(ctx, []store.WorkloadRecord{rec}, nil); err != nil {
		t.Fatal(err)
	}
	if beta := getAs[views.Workload](t, standby, "/api/v1/workloads/"+f.betaJob); !strings.HasPrefix(beta.EstimateBasis, "No estimate yet") {
		t.Errorf("beta-job run again: basis %q, want no estimate yet", beta.EstimateBasis)
	}

	// train-a starts: its record no longer holds the estimate, whatever its phase is next.
	rec, err = f.st.WorkloadRecord(ctx, f.trainA)
	if err != nil {
		t.Fatal(err)
	}
	rec.Phase = "Running"
	if err := f.st.RecordWorkloads(ctx, []store.WorkloadRecord{rec}, nil); err != nil {
		t.Fatal(err)
	}
	if rec, err = f.st.WorkloadRecord(ctx, f.trainA); err != nil || rec.EstimatedStartAt != nil || rec.EstimateBasis != "" {
		t.Errorf("train-a runs, its record keeps the estimate %v %q (%v)", rec.EstimatedStartAt, rec.EstimateBasis, err)
	}
}
