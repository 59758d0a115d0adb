package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/kubejobs"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
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
	serve := kubejobs.Deployment("ov-serve", ns).Replicas(1).GPUs(1).CPU("1").SchedulerName(e.sched).Obj()
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
