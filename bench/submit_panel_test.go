package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
)

// Twenty researchers typing in the Submit page: each one's panel asks for a dry run every
// panelEvery for panelFor, each researcher with an API key of their own (so the per-caller
// bound is per researcher, as for people signed in).
const (
	panelResearchers = 20
	panelEvery       = 300 * time.Millisecond
	panelFor         = 10 * time.Second
)

// BenchmarkSubmitPanel measures POST /submit/dry-run, the Submit page's panel, with 20
// researchers typing at once against `arbiter serve` and the cluster behind it: 500 kwok
// nodes × 8 GPUs on the local control plane, filled by 4,000 low-priority preemptible one-GPU
// Jobs Arbiter scheduled. Half the researchers type a high-priority training, which would
// preempt (its answer names a victim and is audited), half one of the default priority, which
// waits (its start is estimated). Each researcher's form changes every 300 ms; as htmx does for
// one element, a researcher has at most one panel request in flight, and a change made meanwhile
// is sent as soon as the answer is in (the latest only), its latency counted from the change.
// It reports the latency percentiles, how many panels the dry-run bounds refused
// (--dry-runs-per-replica 8, --dry-runs-per-caller 2 by default), and, first, one panel's
// latency at rest (one researcher, one request at a time). Run with -benchtime=1x.
func BenchmarkSubmitPanel(b *testing.B) {
	cb := startCluster(b, benchNodes, false)
	cb.arbiter = startArbiter(b, cb.dbURL, cb.cluster.Kubeconfig())
	ns := cb.project("panel", benchNodes*benchGPUs)
	cb.createJobs(ns, "panel", "arbiter", benchJobs, map[string]string{"priorityClassName": "low", "kai.scheduler/preemptibility": "preemptible"})
	if _, ok := cb.waitRunning(benchJobs, 10*time.Minute); !ok {
		b.Fatalf("only %d of %d pods Running", cb.running.Load(), benchJobs)
	}
	project, err := cb.st.ProjectNamed(cb.ctx, ns)
	if err != nil {
		b.Fatal(err)
	}
	researchers := make([]*http.Client, panelResearchers)
	for i := range researchers {
		researchers[i] = &http.Client{Timeout: time.Minute,
			Transport: bearer{token: researcherKey(b, cb.st, project.ID), base: &http.Transport{MaxIdleConnsPerHost: 8}}}
	}
	panel := cb.arbiter.url + "/submit/dry-run"
	form := func(researcher, keystroke int) url.Values {
		priority := "" // the type's default
		if researcher%2 == 0 {
			priority = "high"
		}
		return url.Values{"type": {"trainings"}, "projectId": {project.ID.String()}, "name": {fmt.Sprintf("exp-%d-%d", researcher, keystroke)},
			"spec.image": {"example.invalid/train:1"}, "spec.compute.gpuDevicesRequest": {"1"}, "spec.priorityClass": {priority}}
	}
	for _, r := range []int{0, 1} {
		status, body := postPanel(cb.ctx, researchers[r], panel, form(r, 0))
		if status != http.StatusOK || refusedPanel(body) {
			b.Fatalf("the panel answers %d: %.500s", status, body)
		}
		b.Logf("researcher %d's first panel: %.600s", r, body)
	}
	var rest Latencies
	for k := range 20 {
		began := time.Now()
		status, _ := postPanel(cb.ctx, researchers[k%2], panel, form(k%2, k))
		rest.Durations = append(rest.Durations, time.Since(began))
		if status != http.StatusOK {
			rest.Errors++
		}
	}
	b.Logf("one panel at a time, 20 panels: p50 %s, max %s, %d errors", rest.Percentile(50), rest.Percentile(100), rest.Errors)
	typing(cb.ctx, researchers, panel, form, 2*time.Second) // warm-up
	b.ResetTimer()
	var run panelRun
	for b.Loop() {
		run = typing(cb.ctx, researchers, panel, form, panelFor)
	}
	b.StopTimer()
	b.ReportMetric(float64(run.lat.Percentile(50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(run.lat.Percentile(99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(run.lat.Percentile(100).Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(len(run.lat.Durations)), "requests")
	b.ReportMetric(float64(run.refused), "refused")
	b.ReportMetric(float64(run.lat.Errors), "errors")
	b.Logf("%d researchers, a change every %s for %s: %d answers, %d refused by the dry-run bounds, %d errors; p50 %s p99 %s max %s",
		panelResearchers, panelEvery, panelFor, len(run.lat.Durations), run.refused, run.lat.Errors,
		run.lat.Percentile(50), run.lat.Percentile(99), run.lat.Percentile(100))
}

// panelRun is what the researchers got: every answer's latency, and how many panels said the
// dry run was refused by a bound.
type panelRun struct {
	lat     Latencies
	refused int
}

// typing has each researcher change the form every panelEvery for the duration, starting
// spread over the first period, with at most one panel request in flight each (htmx queues
// the latest change meanwhile and sends it on the answer), and records each answer's latency
// from the change it answers.
func typing(ctx context.Context, researchers []*http.Client, panel string, form func(researcher, keystroke int) url.Values, duration time.Duration) panelRun {
	var mu sync.Mutex
	var run panelRun
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(duration)
	for r, client := range researchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			due := start.Add(panelEvery * time.Duration(r) / time.Duration(len(researchers)))
			for k := 0; due.Before(end); k++ {
				time.Sleep(time.Until(due))
				status, body := postPanel(ctx, client, panel, form(r, k))
				answered := time.Now()
				mu.Lock()
				run.lat.Durations = append(run.lat.Durations, answered.Sub(due))
				switch {
				case status != http.StatusOK:
					run.lat.Errors++
				case refusedPanel(body):
					run.refused++
				}
				mu.Unlock()
				// The next change: the next tick, or, when ticks passed while waiting, the
				// last of them, sent at once.
				due = due.Add(panelEvery)
				if missed := answered.Sub(due); missed > 0 {
					due = due.Add(missed / panelEvery * panelEvery)
				}
			}
		}()
	}
	wg.Wait()
	return run
}

// refusedPanel says whether a panel says its dry run was refused by a bound (web.DryRunLimits).
func refusedPanel(body string) bool {
	return strings.Contains(body, "dry runs running, the most") || strings.Contains(body, "dry runs, the most")
}

func postPanel(ctx context.Context, client *http.Client, panel string, form url.Values) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, panel, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	res, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, string(body)
}

// researcherKey creates a researcher's API key in the project and returns its token.
func researcherKey(b *testing.B, st *store.Store, project uuid.UUID) string {
	b.Helper()
	id := uuid.New()
	token, hash := auth.NewAPIKey(id)
	_, err := st.CreateAPIKey(context.Background(), store.NewAPIKey{ID: id, Name: "researcher-" + id.String()[:8], Role: string(auth.RoleResearcher),
		ScopeType: string(auth.ScopeProject), ScopeID: &project, ExpiresAt: time.Now().Add(time.Hour), SecretHash: hash},
		store.Actor{Subject: "bench", SubjectType: "system"})
	if err != nil {
		b.Fatal(err)
	}
	return token
}
