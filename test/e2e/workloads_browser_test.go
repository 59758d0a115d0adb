package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserWorkloadsInlineAndBulk drives the Workloads page against the scheduler on the
// local control plane: a running Job's priority changed inline labels the Job in the cluster,
// and a bulk preemptibility change over three rows, one in a project whose policy forbids
// preemptibility changes, changes two and shows the policy's sentence for the third.
func TestBrowserWorkloadsInlineAndBulk(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 8)
	nsA := e.project("alpha", 8, store.PolicyUpdate{})
	nsB := e.project("beta", 8, store.PolicyUpdate{AllowPreemptibilityChange: opt(false)})
	train := e.job(jobSpec{name: "train", namespace: nsA, labels: labels("low", "preemptible")})
	other := e.job(jobSpec{name: "other", namespace: nsA, labels: labels("low", "preemptible")})
	locked := e.job(jobSpec{name: "locked", namespace: nsB, labels: labels("low", "preemptible")})
	for _, j := range []struct{ ns, name, uid string }{{nsA, "train", string(train.UID)}, {nsA, "other", string(other.UID)}, {nsB, "locked", string(locked.UID)}} {
		e.eventually(j.name+" runs and is recorded as Running", 2*time.Minute, func() bool {
			r, err := e.store.WorkloadRecord(e.ctx, j.uid)
			return e.running(j.ns, j.name) == 1 && err == nil && r.Phase == "Running"
		})
	}

	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil { // the console reads at 1280 px
		t.Fatal(err)
	}
	loginAsAdmin(t, ctx, e.a)
	row := "#wl-" + string(train.UID)
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.a.URL+"/workloads"),
		chromedp.WaitVisible(row+` select[name="priority"]`),
		htmxIdle(),
		changeSelect(row+` select[name="priority"]`, "high"),
		chromedp.WaitVisible(row+` .status .ok`), // the refreshed row says Saved priority
	)
	if err != nil {
		t.Fatal(err)
	}
	if saved, err := chromedp.Run(ctx, chromedp.Text(row+` .status`)); err != nil || !strings.Contains(saved, "Saved priority") {
		t.Errorf("the row says %q (%v)", saved, err)
	}
	screenshot(t, ctx, "workloads-inline-change")
	job, err := e.client.BatchV1().Jobs(nsA).Get(e.ctx, "train", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := job.Labels["priorityClassName"]; got != "high" {
		t.Errorf("the Job's priorityClassName label is %q, want high", got)
	}
	// The workload's story has the change in its timeline, with who made it.
	change := `#timeline li.event-PriorityChanged`
	if err := chromedp.Do(ctx, chromedp.Navigate(e.a.URL+"/workloads/"+string(train.UID)), chromedp.WaitVisible(change)); err != nil {
		t.Fatal(err)
	}
	if entry, err := chromedp.Run(ctx, chromedp.Text(change)); err != nil || !strings.Contains(entry, "by Administrator") || !strings.Contains(entry, "high") {
		t.Errorf("the timeline's PriorityChanged entry reads %q (%v), want the new priority and by Administrator", entry, err)
	}
	screenshot(t, ctx, "workload-story-priority-changed")

	// Bulk: semi-preemptible on three rows; beta's policy refuses. (Not non-preemptible: beta
	// ignores the Job's label, so its policy gives the Job type's non-preemptible, and asking
	// for that changes nothing, which a project that forbids changes accepts.)
	err = chromedp.Do(ctx,
		chromedp.Navigate(e.a.URL+"/workloads"),
		chromedp.WaitVisible(`#bulk-form`),
		htmxIdle(),
		chromedp.Click(row+` input[name="id"]`),
		chromedp.Click(`#wl-`+string(other.UID)+` input[name="id"]`),
		chromedp.Click(`#wl-`+string(locked.UID)+` input[name="id"]`),
		chromedp.SetValue(`#bulk-form select[name="preemptibility"]`, "semi-preemptible"),
		chromedp.Click(`#bulk-apply`),
		chromedp.WaitVisible(`#bulk-result li`),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Read by script, not by node id: once in a full parallel run chromedp's ids of the page
	// the form's POST loaded went stale ("No node with given id found").
	result, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#bulk-result").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "workloads-after-bulk")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(800, 900)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "workloads-after-bulk-800")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(result, ": changed"); n != 2 {
		t.Errorf("bulk result shows %d changes, want 2: %q", n, result)
	}
	if !strings.Contains(result, "locked: refused — project beta-"+e.id+" does not allow changing preemptibility") {
		t.Errorf("bulk result lacks beta's sentence: %q", result)
	}
	// The address after the change is the Workloads view (Post/Redirect/Get): reloading it shows
	// the view again, without the outcome and without an error.
	if loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`)); err != nil || loc != "/workloads" {
		t.Errorf("after the bulk change the address is %q (%v), want /workloads", loc, err)
	}
	err = chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(`#workloads-table`))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#bulk-result").length`)); err != nil || n != 0 {
		t.Errorf("the reloaded view still shows the bulk outcome (%d, %v)", n, err)
	}
	for _, j := range []struct{ ns, name, prio, pre string }{{nsA, "train", "high", "semi-preemptible"}, {nsA, "other", "low", "semi-preemptible"}, {nsB, "locked", "low", "preemptible"}} {
		job, err := e.client.BatchV1().Jobs(j.ns).Get(e.ctx, j.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if job.Labels["priorityClassName"] != j.prio || job.Labels["kai.scheduler/preemptibility"] != j.pre {
			t.Errorf("Job %s has labels %v, want priority %s and %s", j.name, job.Labels, j.prio, j.pre)
		}
	}

	// A viewer sees the same rows and no control to change them.
	viewer := newBrowser(t)
	if err := chromedp.Do(viewer, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	e.localUser(t, "vera", "viewer-password-1", "viewer")
	loginAs(t, viewer, e.a, "vera", "viewer-password-1", "viewer")
	if err := chromedp.Do(viewer, chromedp.Navigate(e.a.URL+"/workloads"), chromedp.WaitVisible(row)); err != nil {
		t.Fatal(err)
	}
	controls, err := chromedp.Run(viewer, chromedp.Evaluate[int](`document.querySelectorAll("#workloads-table select, #workloads-table input[type=checkbox], #bulk-form").length`))
	if err != nil {
		t.Fatal(err)
	}
	if controls != 0 {
		t.Errorf("a viewer sees %d selects, checkboxes or bulk forms on Workloads, want none", controls)
	}
	screenshot(t, viewer, "workloads-as-viewer")

	// The table refreshes itself: a Job submitted after the page loaded appears in it.
	late := e.job(jobSpec{name: "late", namespace: nsA, labels: labels("low", "preemptible")})
	if err := chromedp.Do(viewer, chromedp.WaitVisible(`#wl-`+string(late.UID))); err != nil {
		t.Errorf("the Workloads table did not show a new Job without a reload: %v", err)
	}
}
