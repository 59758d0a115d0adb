package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserSubmitNamesItsVictim: a researcher fills the Submit page (its fields and General
// settings following the type chosen) in a project where a
// running low-priority preemptible Job holds both GPUs; as the form changes, the dry-run panel
// names that Job, linked to its page, as the workload it would preempt; submitting lands on
// the new workload's page, and the scheduler then preempts the Job named for it.
func TestBrowserSubmitNamesItsVictim(t *testing.T) {
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
	// The type's fields and defaults follow the type: a distributed training has workers, a
	// workspace is high and non-preemptible, a training low and preemptible. General settings
	// stay at their defaults, each a choice that names today's value.
	settings := func() string {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#submit-form select[name="spec.priorityClass"]').selectedOptions[0].text + ' ' +
			document.querySelector('#submit-form select[name="spec.preemptibility"]').selectedOptions[0].text`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.a.URL+"/submit"),
		chromedp.WaitVisible(`#submit-form input[name="name"]`),
		htmxIdle(),
		changeSelect(`#submit-form select[name="type"]`, "distributed"),
		chromedp.WaitVisible(`#submit-form input[name="spec.numWorkers"]`),
		htmxIdle(),
		changeSelect(`#submit-form select[name="type"]`, "workspaces"),
		chromedp.WaitNotPresent(`#submit-form input[name="spec.numWorkers"]`),
		htmxIdle(),
	)
	if err != nil {
		t.Fatal(err)
	}
	if s := settings(); s != "default (high) default (non-preemptible)" {
		t.Errorf("a workspace's General settings are %q, want its type's defaults high non-preemptible", s)
	}
	if err := chromedp.Do(ctx, changeSelect(`#submit-form select[name="type"]`, "trainings"), htmxIdle()); err != nil {
		t.Fatal(err)
	}
	if s := settings(); s != "default (low) default (preemptible)" {
		t.Errorf("a training's General settings are %q, want low preemptible", s)
	}

	victim := `#dry-run a[href="/workloads/` + string(holder.UID) + `"]`
	err = chromedp.Do(ctx,
		chromedp.SendKeys(`#submit-form input[name="name"]`, "urgent"),
		chromedp.SendKeys(`#submit-form input[name="spec.image"]`, "example.invalid/train:1"),
		changeSelect(`#submit-form input[name="spec.compute.gpuDevicesRequest"]`, "2"),
		changeSelect(`#submit-form select[name="spec.priorityClass"]`, "high"),
		chromedp.WaitVisible(victim),
		htmxIdle(),
	)
	if err != nil {
		t.Fatal(err)
	}
	panel, err := chromedp.Run(ctx, chromedp.Text(`#dry-run`))
	if err != nil || !strings.Contains(panel, "Would preempt these") || !strings.Contains(panel, "holder") {
		t.Errorf("the dry-run panel reads %q (%v)", panel, err)
	}
	screenshot(t, ctx, "submit-dry-run-preempts")

	err = chromedp.Do(ctx,
		chromedp.Click(`#submit-form button[type="submit"]`),
		chromedp.WaitVisible(`#story-summary`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if title, _ := chromedp.Run(ctx, chromedp.Text(`#story-summary`)); title != ns+"/urgent" {
		t.Errorf("after submitting the page is the story of %q, want %s/urgent", title, ns)
	}
	screenshot(t, ctx, "submit-landed-on-workload")
	job, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "urgent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	if err != nil || loc != "/workloads/"+string(job.UID) {
		t.Errorf("after submitting the browser is at %q (%v), want the new workload's page /workloads/%s", loc, err, job.UID)
	}
	if job.Labels["priorityClassName"] != "high" || job.Annotations["arbiter.dev/submitted-by"] != "rita" {
		t.Errorf("the Job's labels %v, annotations %v", job.Labels, job.Annotations)
	}
	e.eventually("urgent runs and the holder was preempted for it", time.Minute, func() bool {
		evs, err := e.store.WorkloadEvents(e.ctx, string(holder.UID))
		if err != nil {
			return false
		}
		for _, ev := range evs {
			if ev.Kind == "Preempted" && ev.PreemptorUID == string(job.UID) {
				return e.running(ns, "urgent") == 1
			}
		}
		return false
	})
}
