package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// TestBrowserOverview signs in at / and lands on the Overview, which shows — refreshing itself,
// without a reload — a Job and a Deployment running on the test's two GPUs and a second Job
// waiting, as the API counts them, and the test's pool fully allocated.
func TestBrowserOverview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("ov", 2, store.PolicyUpdate{})

	ctx := newBrowser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.a.URL+"/"),
		chromedp.WaitVisible(`input[name="username"]`),
		chromedp.SendKeys(`input[name="username"]`, "admin"),
		chromedp.SendKeys(`input[name="password"]`, adminPassword),
		chromedp.Submit(`input[name="password"]`),
		chromedp.WaitVisible(`#tile-running .tile-value`),
	)
	if err != nil {
		t.Fatalf("sign in at /: %v", err)
	}
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || loc != e.a.URL+"/" {
		t.Errorf("after sign-in the browser is at %q (%v), want the Overview at /", loc, err)
	}

	// The workloads start after the page has loaded: only the page's polling can show them.
	e.job(jobSpec{name: "ov-a", namespace: ns})
	serve := objects.Deployment("ov-serve", ns).Replicas(1).GPUs(1).CPU("1").SchedulerName(e.sched).Obj()
	if _, err := e.client.AppsV1().Deployments(ns).Create(e.ctx, serve, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("ov-a and the Deployment run", 2*time.Minute, func() bool {
		recs, _, err := e.store.Workloads(e.ctx, listquery.Query{Limit: listquery.MaxLimit}, false)
		running := 0
		for _, r := range recs {
			if r.Namespace == ns && r.Phase == "Running" && (r.Kind == "Deployment" || r.Name == "ov-a") {
				running++
			}
		}
		return err == nil && running == 2
	})
	e.job(jobSpec{name: "ov-c", namespace: ns})

	tile := func(id string) string {
		return `document.querySelector('#tile-` + id + ` .tile-value').textContent.trim()`
	}
	err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](tile("running")+` === '2' && `+tile("pending")+` === '1'`,
		chromedp.WithPollingTimeout(2*time.Minute)))
	if err != nil {
		running, _ := chromedp.Run(ctx, chromedp.Text(`#tile-running .tile-value`))
		pending, _ := chromedp.Run(ctx, chromedp.Text(`#tile-pending .tile-value`))
		t.Fatalf("the Overview shows %s running, %s pending; want 2 and 1: %v", running, pending, err)
	}
	// The API counts the same.
	for phase, want := range map[string]int{"Running": 2, "Pending": 1} {
		status, body := e.a.do(t, "GET", "/api/v1/workloads?filterBy=phase=="+phase, "")
		if list, _ := body["workloads"].([]any); status != 200 || len(list) != want {
			t.Errorf("the API lists %d %s workloads (status %d), the Overview %d", len(list), phase, status, want)
		}
	}
	pool, err := chromedp.Run(ctx, chromedp.Text(`li[data-pool="`+e.pool.Name+`"] .bar-figures`))
	if err != nil || !strings.Contains(pool, "2 / 2 GPUs") || !strings.Contains(pool, "1 / 1 nodes ready") {
		t.Errorf("the test's pool shows %q (%v), want 2 / 2 GPUs and 1 / 1 nodes ready", pool, err)
	}
	screenshot(t, ctx, "overview")
}

// TestBrowserOverviewWaitingWork: with seven workloads waiting — pending, preempted, suspended
// by Arbiter — and one its owner stopped, the Overview (no cluster: records as the scheduler
// wrote them) counts seven in its tile and by reason with the projects behind each, at 1280
// and at 800 px, with nothing wider than its box; the tile and a reason's project lead to the
// Workloads view filtered to the same workloads, its filters showing what they filter by.
func TestBrowserOverviewWaitingWork(t *testing.T) {
	t.Parallel()
	dbURL := freshDatabase(t)
	a := startArbiter(t, server.Config{DatabaseURL: dbURL})
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool)
	status, body := a.do(t, "POST", "/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":12}}]}`)
	if status != 201 {
		t.Fatalf("create department: %d %v", status, body)
	}
	for _, p := range []string{"vision-research-long-project-name", "speech", "search"} {
		if status, body := a.do(t, "POST", "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":%q,"departmentId":%q,"resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":4}}]}`, p, body["id"])); status != 201 {
			t.Fatalf("create project %s: %d %v", p, status, body)
		}
	}
	now := time.Now()
	var records []store.WorkloadRecord
	add := func(project, phase, reason string, position int) {
		uid := uuid.NewString()
		records = append(records, store.WorkloadRecord{UID: uid, Namespace: "team-" + project[:6], Name: "job-" + uid[:8], Kind: "Job",
			APIGroup: "batch", TypeName: "Job", ProjectName: project, DepartmentName: "research", PriorityName: "low", PriorityValue: 40,
			Preemptibility: "preemptible", Phase: phase, Reason: reason, QueuePosition: position, Gang: 1, RequestedGPUs: 2, QueuedAt: now.Add(-time.Hour)})
	}
	vision := "vision-research-long-project-name"
	add(vision, "Pending", "InsufficientCapacity", 1)
	add(vision, "Pending", "InsufficientCapacity", 2)
	add("speech", "Pending", "OverLimit", 1)
	add(vision, "Preempted", "InsufficientCapacity", 3)
	add("speech", "Preempted", "", 2)
	add("search", "Suspended", "InsufficientCapacity", 1)
	add("search", "Suspended", "NonPreemptibleOverQuota", 2)
	add("search", "Suspended", "", 0) // stopped by its owner
	if err := st.RecordWorkloads(context.Background(), records, nil); err != nil {
		t.Fatal(err)
	}

	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, a)
	for _, width := range []int64{1280, 800} {
		w := fmt.Sprint(width)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(a.URL+"/"), chromedp.WaitVisible(`#tile-pending`), htmxIdle()); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "overview-waiting-"+w)
		tile, _ := chromedp.Run(ctx, chromedp.Text(`#tile-pending .tile-value`))
		reasons, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('li[data-reason]')].map(li => li.innerText.replace(/\s+/g, ' ').trim())`))
		if strings.TrimSpace(tile) != "7" || len(reasons) != 4 || !strings.HasPrefix(reasons[0], "4 Not enough free GPUs InsufficientCapacity") ||
			!strings.Contains(reasons[0], vision+" (3), search (1)") {
			t.Errorf("at %s px the Overview shows %q waiting, by reason %q", w, tile, reasons)
		}
		overflowing(t, ctx, w, `#overview-live, #overview-live .tile, #overview-live .bar-row, #overview-live li[data-reason], #overview-live .card`)
		noBrokenWords(t, ctx, "the Overview at "+w+" px")

		// The tile leads to the seven, the Phase filter saying so.
		if err := chromedp.Do(ctx, chromedp.Click(`#tile-pending`), chromedp.WaitVisible(`#workloads-table`), htmxIdle()); err != nil {
			t.Fatal(err)
		}
		rows, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('tr.workload-row').length`))
		phase, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('select[name=phase]').value`))
		if rows != 7 || phase != "waiting" {
			t.Errorf("at %s px the pending tile leads to %d rows with phase filter %q, want 7 and waiting", w, rows, phase)
		}
		screenshot(t, ctx, "workloads-waiting-"+w)
		noBrokenWords(t, ctx, "the waiting workloads at "+w+" px")
		overflowing(t, ctx, w, `form.filters`)

		// A reason's project leads to its workloads waiting for that reason.
		err := chromedp.Do(ctx, chromedp.NavigateBack(), chromedp.WaitVisible(`#tile-pending`), htmxIdle(),
			chromedp.Click(`li[data-reason="InsufficientCapacity"] a[data-reason-project="`+vision+`"]`), chromedp.WaitVisible(`#workloads-table`), htmxIdle())
		if err != nil {
			t.Fatal(err)
		}
		rows, _ = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('tr.workload-row').length`))
		reason, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('select[name=reason]').value`))
		project, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('select[name=project]').value`))
		if rows != 3 || reason != "InsufficientCapacity" || project != vision {
			t.Errorf("at %s px %s's InsufficientCapacity link leads to %d rows, filters %q and %q; want 3", w, vision, rows, reason, project)
		}
	}
}

// overflowing fails the test for each element matching sel whose content is wider than its
// box (cut off or scrolling), and when the page itself scrolls sideways.
func overflowing(t *testing.T, ctx context.Context, width, sel string) {
	t.Helper()
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+jsString(sel)+`)]
		.filter(el => el.scrollWidth > el.clientWidth + 1)
		.map(el => (el.id || el.className || el.tagName) + ': ' + el.scrollWidth + ' > ' + el.clientWidth)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(wide) > 0 {
		t.Errorf("at %s px, wider than their box: %v", width, wide)
	}
	page, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
	if page > 0 {
		t.Errorf("at %s px the page scrolls sideways by %d px", width, page)
	}
}
