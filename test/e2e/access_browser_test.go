package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserAccessPickersAndKeyNames: an admin adds an access rule on the Access page by
// choosing a group the subject field suggests and a project by name from the Scope picker; the
// rules table names the project. A change made with an API key shows in the Event history
// under the key's name, with its id beside it. Both pages are looked at 1280 and 800 px wide.
func TestBrowserAccessPickersAndKeyNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	e.project("picked", 1, store.PolicyUpdate{})
	project := "picked-" + e.id
	if status, _ := e.a.do(t, "POST", "/api/v1/org-unit/departments", `{"name":"keyed-`+e.id+`"}`); status != 201 {
		t.Fatalf("creating a department with the admin's API key answered %d", status)
	}
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	loginAsAdmin(t, ctx, e.a)
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.a.URL+"/access"),
		chromedp.WaitVisible(`#new-rule select[name="scope"]`),
		chromedp.SetValue(`#new-rule select[name="subjectType"]`, "group"),
		chromedp.SendKeys(`#new-rule input[name="subject"]`, "ml-team"),
		chromedp.SetValue(`#new-rule select[name="role"]`, "researcher"),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Choose the project by what the person reads.
	chosen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const sel = document.querySelector('#new-rule select[name="scope"]');
		const o = [...sel.options].find(o => o.text.startsWith(`+jsString(project+" (department ")+`));
		if (!o) return "";
		sel.value = o.value;
		return o.text;
	})()`))
	if err != nil || chosen == "" {
		t.Fatalf("the Scope picker offers no %s by name (%v)", project, err)
	}
	// The form posts and the server answers with the Access page again (post, redirect, get):
	// the old page already has a rules table, so wait for the new rule to be in it, not for
	// the table.
	err = chromedp.Do(ctx,
		chromedp.Click(`#new-rule button[type="submit"]`),
		chromedp.WaitVisible(`//table[@id="rules-table"]//td[contains(., "`+project+`")]`),
	)
	if err != nil {
		t.Fatalf("the rules table never showed the new rule at %s: %v", project, err)
	}
	rules, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#rules-table").innerText`))
	if err != nil || !strings.Contains(rules, "ml-team") || !strings.Contains(rules, "project "+project) {
		t.Errorf("the rules table reads %q (%v), want ml-team's rule at project %s by name", rules, err, project)
	}
	screenshot(t, ctx, "access-pickers-1280")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(800, 900)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "access-pickers-800")

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(e.a.URL+"/event-history?entityType=department"), chromedp.WaitVisible(`#audit-table`)); err != nil {
		t.Fatal(err)
	}
	subject, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("#audit-table td.subject") || {innerText: ""}).innerText`))
	if err != nil || !strings.HasPrefix(subject, "e2e-admin-") || !strings.Contains(subject, "api-key") {
		t.Errorf("the department's audit row's subject reads %q (%v), want the API key's name", subject, err)
	}
	screenshot(t, ctx, "event-history-key-name-1280")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(800, 900)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "event-history-key-name-800")
}
