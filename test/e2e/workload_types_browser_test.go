package e2e

import (
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
	"github.com/chromedp/chromedp"
)

// TestBrowserChangesTypePriority changes a workload type's priority inline on the Workload
// types page, sees the row confirm it, and finds it again after a reload and in the API.
func TestBrowserChangesTypePriority(t *testing.T) {
	t.Parallel()
	a := startArbiter(t, server.Config{DatabaseURL: freshDatabase(t)})
	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, a)
	jobID := store.SeedID("workload-type", "batch/Job").String()
	veryLow := store.SeedID("priority", "very-low").String()
	row := "#type-" + jobID

	err := chromedp.Do(ctx,
		chromedp.Navigate(a.URL+"/workload-types"),
		chromedp.WaitVisible(row+` select[name="priorityId"]`),
		htmxIdle(),
		changeSelect(row+` select[name="priorityId"]`, veryLow),
		chromedp.WaitVisible(row+` .ok`), // the refreshed row says Saved
	)
	if err != nil {
		t.Fatal(err)
	}
	effective, err := chromedp.Run(ctx, chromedp.Text(row+` .effective`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "workload-types-after-change")
	if !strings.Contains(effective, "very-low") {
		t.Errorf("the refreshed row shows effective %q, want very-low", effective)
	}
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(row+` select[name="priorityId"]`)); err != nil {
		t.Fatal(err)
	}
	selected, err := chromedp.Run(ctx, chromedp.Value(row+` select[name="priorityId"]`))
	if err != nil {
		t.Fatal(err)
	}
	if selected != veryLow {
		t.Errorf("after reload the priority select holds %q, want very-low's id %s", selected, veryLow)
	}
	_, got := a.do(t, "GET", "/api/v1/workload-types/"+jobID, "")
	if got["priorityName"] != "very-low" {
		t.Errorf("the API shows priority %v", got["priorityName"])
	}
}

// TestBrowserFiltersWithoutReload narrows the table with the search box (htmx swaps the table).
func TestBrowserFiltersWithoutReload(t *testing.T) {
	t.Parallel()
	a := startArbiter(t, server.Config{DatabaseURL: freshDatabase(t)})
	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, a)
	err := chromedp.Do(ctx,
		chromedp.Navigate(a.URL+"/workload-types"),
		chromedp.WaitVisible(`input[name="search"]`),
		chromedp.SendKeys(`input[name="search"]`, "ray"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#types-table form[role=row]').length === 3 && document.querySelector('#types-results .count').textContent === '3 workload types'`),
	)
	if err != nil {
		t.Fatalf("searching for ray did not leave the 3 Ray types: %v", err)
	}
	screenshot(t, ctx, "workload-types-search")
}
