package web_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/arbiterhq/arbiter/internal/metrics"
	"github.com/arbiterhq/arbiter/web"
)

// TestRequestsPastABoundAreCountedNotWrittenEach: a signed-in caller past a concurrency bound
// (its dry runs, here) gets 429 each time; each is counted in arbiter_refused_requests_total
// with reason "limited", and the audit log takes one row for the lot within the minute, not
// one each — a bound that exists to spare the server must not make it write a row per refusal.
func TestRequestsPastABoundAreCountedNotWrittenEach(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	limits := web.NewDryRunLimits(8, 1)
	f := newSubmitAPIWith(t, func(d *web.Deps) {
		d.Foresee, d.DryRuns = &fakeForesight{}, limits
		d.Metrics, d.Requests, d.Refusals = m.Handler(), m, m
	})
	researcher := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	release, err := limits.Acquire(keySubmitter(t, researcher))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	body := fmt.Sprintf(`{"name":"train-a","projectId":%q,"spec":{"image":"python:3.12","compute":{"gpuDevicesRequest":2}}}`, f.alpha)
	const n = 30
	for range n {
		if r := f.submit(t, researcher, "trainings?dryRun=true", body); r.status != http.StatusTooManyRequests {
			t.Fatalf("a dry run past the caller's bound = %d %s, want 429", r.status, r.body)
		}
	}
	if got := refusalsCounted(t, m, "/api/v1/workloads/trainings", "limited"); got != n {
		t.Errorf("arbiter_refused_requests_total{reason=limited} = %v, want %d", got, n)
	}
	if rows := refusalRows(t, f.st, "failure", http.StatusTooManyRequests); len(rows) != 1 {
		t.Errorf("%d audit rows for %d refusals within a minute, want 1", len(rows), n)
	}
}
