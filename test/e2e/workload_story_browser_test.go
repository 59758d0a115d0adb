package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserWorkloadStoryNamesPreemptor: on the local control plane a high-priority Job
// preempts a preemptible low-priority Job of its own project (S16); the victim's page names its
// preemptor, linked to the preemptor's page, and the rule, and the Event history's scheduling
// tab lists the preemption.
func TestBrowserWorkloadStoryNamesPreemptor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("story", 2, store.PolicyUpdate{})
	victim := e.job(jobSpec{name: "victim", namespace: ns, pods: 2, labels: labels("low", "preemptible")})
	e.eventually("the victim runs on both GPUs", 2*time.Minute, func() bool { return e.running(ns, "victim") == 2 })
	urgent := e.job(jobSpec{name: "urgent", namespace: ns, runSeconds: "20", labels: labels("high", "")})
	e.eventually("the victim's history records its preemption by urgent", 2*time.Minute, func() bool {
		evs, err := e.store.WorkloadEvents(e.ctx, string(victim.UID))
		if err != nil {
			return false
		}
		for _, ev := range evs {
			if ev.Kind == "Preempted" && ev.PreemptorUID == string(urgent.UID) {
				return true
			}
		}
		return false
	})

	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil { // the width the console must read at
		t.Fatal(err)
	}
	loginAsAdmin(t, ctx, e.a)
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.a.URL+"/workloads/"+string(victim.UID)),
		chromedp.WaitVisible(`#why a.workload-link`),
	)
	if err != nil {
		t.Fatalf("open the victim's page: %v", err)
	}
	why, err := chromedp.Run(ctx, chromedp.Text(`#why`))
	if err != nil {
		t.Fatal(err)
	}
	link, err := chromedp.Run(ctx, chromedp.AttributeValue(`#why a.workload-link`, "href"))
	if err != nil {
		t.Fatal(err)
	}
	href := link.Value
	// The next step and the pods follow the scheduler; wait until the page shows them before
	// the screenshot (evidence, not an assertion).
	_ = chromedp.Do(ctx, chromedp.WaitVisible(`.story-pods`))
	screenshot(t, ctx, "workload-story-preempted")
	why = strings.Join(strings.Fields(why), " ")
	for _, want := range []string{"by " + ns + "/urgent under S16", "in-project priority", "Next time: run it non-preemptible within project story-" + e.id + "'s deserved quota, or at a higher priority"} {
		if !strings.Contains(why, want) {
			t.Errorf("the victim's page says %q, want it to contain %q", why, want)
		}
	}
	if want := "/workloads/" + string(urgent.UID); href != want {
		t.Errorf("the preemptor links to %q, want %q", href, want)
	}

	// Following the link opens the preemptor's story; its timeline shows it was admitted.
	err = chromedp.Do(ctx,
		chromedp.Click(`#why a.workload-link`),
		chromedp.WaitVisible(`#timeline li.event-Admitted`),
	)
	if err != nil {
		t.Fatalf("follow the preemptor's link: %v", err)
	}
	title, err := chromedp.Run(ctx, chromedp.Text(`#story-summary`))
	if err != nil {
		t.Fatal(err)
	}
	if want := ns + "/urgent"; title != want {
		t.Errorf("the preemptor's page is about %q, want %q", title, want)
	}

	err = chromedp.Do(ctx,
		chromedp.Navigate(e.a.URL+"/event-history?tab=scheduling&project=story-"+e.id),
		chromedp.WaitVisible(`#scheduling-table tr.sched-row`),
	)
	if err != nil {
		t.Fatalf("open the scheduling events: %v", err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Text(`#scheduling-table tbody`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "event-history-scheduling")
	if want := "Preempted by " + ns + "/urgent under S16"; !strings.Contains(rows, want) {
		t.Errorf("the scheduling events %q do not contain %q", rows, want)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(e.a.URL+"/event-history"),
		chromedp.WaitVisible(`#audit-table`),
	)
	if err == nil {
		screenshot(t, ctx, "event-history-audit")
	}
}
