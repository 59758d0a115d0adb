package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserS14_RefusedChangeInlineAndInBulkPreview drives the Workloads page at 1280 and
// 800 px where a preemptible Job runs on borrowed GPUs: making it non-preemptible in its row
// shows S14's sentence in place; the bulk form's Preview says it would be refused (and that a
// small Job within its project's quota would change) before anything is saved, keeping the
// selection, and applying it changes the small Job only.
func TestBrowserS14_RefusedChangeInlineAndInBulkPreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 8)
	ns, uid := e.borrowerOnTwoDeserved("lab")
	smallNS := e.project("small", 2, store.PolicyUpdate{})
	small := e.job(jobSpec{name: "small", namespace: smallNS, labels: labels("low", "preemptible")})
	e.eventually("the small Job runs", time.Minute, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, string(small.UID))
		return err == nil && r.Phase == "Running"
	})
	const why = "beyond its deserved quota of 2, and work beyond the deserved quota must stay reclaimable (S14)"

	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, e.a)
	row := "#wl-" + uid
	for _, width := range []int64{1280, 800} {
		err := chromedp.Do(ctx,
			chromedp.EmulateViewport(width, 900),
			chromedp.Navigate(e.a.URL+"/workloads"),
			chromedp.WaitVisible(row+` select[name="preemptibility"]`),
			htmxIdle(),
			changeSelect(row+` select[name="preemptibility"]`, "non-preemptible"),
			chromedp.WaitVisible(row+` .status .err`),
		)
		if err != nil {
			t.Fatal(err)
		}
		if said, err := chromedp.Run(ctx, chromedp.Text(row+` .status .err`)); err != nil || !strings.Contains(said, why) || !strings.Contains(said, "Keep it preemptible") {
			t.Errorf("at %d px the row says %q (%v), want S14's sentence", width, said, err)
		}
		// The sentence reads across the table under the row, which stays as low as the
		// small Job's: not a narrow column of text that makes the row ~230 px high.
		high, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[...document.querySelectorAll('#workloads-table tr.workload-row')].map(tr => Math.round(tr.getBoundingClientRect().height))`))
		if err != nil {
			t.Fatal(err)
		}
		wide, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`Math.round(document.querySelector(`+jsString(row+` .status .err`)+`).getBoundingClientRect().width)`))
		if len(high) != 2 || high[0] > 90 || high[1] > 90 || wide < 400 {
			t.Errorf("at %d px the rows are %v px high and the refusal %d px wide, want rows at most 90 px and the refusal across the table", width, high, wide)
		}
		screenshot(t, ctx, fmt.Sprintf("workloads-s14-inline-refused-%d", width))
	}

	// Bulk: preview first, nothing saved; the selection and the form are kept for applying.
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(e.a.URL+"/workloads"),
		chromedp.WaitVisible(`#bulk-form`),
		htmxIdle(),
		chromedp.Click(row+` input[name="id"]`),
		chromedp.Click(`#wl-`+string(small.UID)+` input[name="id"]`),
		chromedp.SetValue(`#bulk-form select[name="preemptibility"]`, "non-preemptible"),
		chromedp.Click(`#bulk-form button[name="preview"]`),
		chromedp.WaitVisible(`#bulk-result li`),
	)
	if err != nil {
		t.Fatal(err)
	}
	result, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#bulk-result").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(result, "borrower: would be refused — ") || !strings.Contains(result, why) || !strings.Contains(result, "small: would change") {
		t.Errorf("the preview reads %q", result)
	}
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelectorAll('#workloads-table input[name="id"]:checked').length + " " +
		document.querySelector('#bulk-form select[name="preemptibility"]').value`))
	if err != nil || kept != "2 non-preemptible" {
		t.Errorf("after the preview: %q (%v), want both rows selected and non-preemptible chosen", kept, err)
	}
	screenshot(t, ctx, "workloads-s14-bulk-preview-1280")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(800, 900)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "workloads-s14-bulk-preview-800")
	labelOf := func(ns, name string) string {
		job, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return job.Labels["kai.scheduler/preemptibility"]
	}
	if a, b := labelOf(ns, "borrower"), labelOf(smallNS, "small"); a != "preemptible" || b != "preemptible" {
		t.Fatalf("the preview changed labels: borrower %q, small %q", a, b)
	}

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Click(`#bulk-apply`)); err != nil {
		t.Fatal(err)
	}
	// The form's POST loads a new page: read it by script once it says what was applied, as
	// a wait that spans the navigation loses its target.
	// A timeout is reported below with what the page says.
	poll.Within(30*time.Second, func() bool {
		result, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("#bulk-result") || {innerText: ""}).innerText`))
		return strings.Contains(result, "Bulk change\n")
	})
	if !strings.Contains(result, "borrower: refused — ") || !strings.Contains(result, why) || !strings.Contains(result, "small: changed") {
		t.Errorf("the bulk outcome reads %q", result)
	}
	screenshot(t, ctx, "workloads-s14-bulk-applied-1280")
	if a, b := labelOf(ns, "borrower"), labelOf(smallNS, "small"); a != "preemptible" || b != "non-preemptible" {
		t.Errorf("after applying: borrower %q (want preemptible), small %q (want non-preemptible)", a, b)
	}
}
