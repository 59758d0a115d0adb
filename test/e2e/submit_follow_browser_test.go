package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserSubmittedWorkloadFollowsItself: after Submit the new workload's page says which
// workloads the dry run at submission predicted it would preempt (as that prediction, linked),
// and then follows the workload by itself: without a reload it goes from waiting for the
// scheduler's next cycle to Running once the scheduler has preempted the holder for it.
func TestBrowserSubmittedWorkloadFollowsItself(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("lab", 2, store.PolicyUpdate{})
	holder := e.job(jobSpec{name: "holder", namespace: ns, pods: 2, labels: labels("low", "preemptible")})
	e.eventually("the holder runs on both GPUs", time.Minute, func() bool { return e.running(ns, "holder") == 2 })
	e.localUser(t, "rita", "rita-password-1", "researcher")

	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	loginAs(t, ctx, e.a, "rita", "rita-password-1", "researcher")
	victim := `#dry-run a[href="/workloads/` + string(holder.UID) + `"]`
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.a.URL+"/submit"),
		chromedp.WaitVisible(`#submit-form input[name="name"]`),
		htmxIdle(),
		changeSelect(`#submit-form select[name="type"]`, "trainings"),
		htmxIdle(),
		chromedp.SendKeys(`#submit-form input[name="name"]`, "urgent"),
		chromedp.SendKeys(`#submit-form input[name="spec.image"]`, "example.invalid/train:1"),
		changeSelect(`#submit-form input[name="spec.compute.gpuDevicesRequest"]`, "2"),
		changeSelect(`#submit-form select[name="spec.priorityClass"]`, "high"),
		chromedp.WaitVisible(victim),
		htmxIdle(),
		chromedp.Click(`#submit-form button[type="submit"]`),
		chromedp.WaitVisible(`#story-summary`),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The landing page names the dry run's victims, as a prediction, linked to their pages.
	predicted, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("#predicted-victims") || {innerText: ""}).innerText`))
	if err != nil || !strings.Contains(predicted, "dry run") || !strings.Contains(predicted, "predicted") || !strings.Contains(predicted, ns+"/holder") {
		t.Errorf("the landing page's prediction reads %q (%v), want the dry run's predicted victim %s/holder", predicted, err, ns)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#predicted-victims a[href="/workloads/`+string(holder.UID)+`"]').length`)); err != nil || n != 1 {
		t.Errorf("the predicted victim is linked %d times (%v), want once", n, err)
	}
	screenshot(t, ctx, "workload-landed-prediction-1280")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(800, 900)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "workload-landed-prediction-800")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	// The page follows the workload without a reload: a mark set on this document survives
	// until the phase reads Running.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.sameDocument = true`)); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelector("#story-phase") && document.querySelector("#story-phase").innerText === "Running"`,
		chromedp.WithPollingTimeout(90*time.Second), chromedp.WithPollingInterval(500*time.Millisecond)))
	phase, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("#story-phase") || {innerText: ""}).innerText`))
	if err != nil {
		t.Fatalf("the workload's page still reads %q after 90 s: it does not follow the workload (%v)", phase, err)
	}
	if same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.sameDocument === true`)); err != nil || !same {
		t.Errorf("the page was reloaded to show the phase (%v), want it updated in place", err)
	}
	if e.running(ns, "urgent") == 0 {
		t.Error("the page says Running, the cluster runs no pod of urgent")
	}
	// Beside its priority, the page says where it came from: the priority the form asked for,
	// written as the workload's label, as the scheduler resolved it.
	from, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("#story-priority-from") || {innerText: ""}).innerText`))
	if want := "asked for with the label priorityClassName on the "; err != nil || !strings.HasPrefix(from, want) {
		t.Errorf("the page says its priority came from %q (%v), want %q…", from, err, want)
	}
	screenshot(t, ctx, "workload-followed-to-running-1280")
}
