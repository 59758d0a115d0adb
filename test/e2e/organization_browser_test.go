package e2e

import (
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
	"github.com/chromedp/chromedp"
)

// TestBrowserOrganizationQuotas creates a department and a project with a quota through the
// console's forms, edits the project's quota inline, and sees the refusal next to the quota
// when it would exceed the department's share.
func TestBrowserOrganizationQuotas(t *testing.T) {
	t.Parallel()
	a := startArbiter(t, server.Config{DatabaseURL: freshDatabase(t)})
	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, a)
	def := store.DefaultNodePoolID.String()

	err := chromedp.Do(ctx,
		chromedp.Navigate(a.URL+"/departments"),
		chromedp.WaitVisible(`form.create input[name="name"]`),
		chromedp.SendKeys(`form.create input[name="name"]`, "research"),
		chromedp.SendKeys(`form.create input[name="deserved-`+def+`"]`, "8"),
		chromedp.Submit(`form.create input[name="name"]`),
		chromedp.WaitVisible(`#departments-table input[value="research"]`),
	)
	if err != nil {
		t.Fatalf("create the department: %v", err)
	}
	status, list := a.do(t, "GET", "/api/v1/org-unit/departments?filterBy=name==research", "")
	depts, _ := list["departments"].([]any)
	if status != 200 || len(depts) != 1 {
		t.Fatalf("the API lists %d %v", status, list)
	}
	deptID := depts[0].(map[string]any)["id"].(string)

	err = chromedp.Do(ctx,
		chromedp.Navigate(a.URL+"/projects"),
		chromedp.WaitVisible(`form.create input[name="name"]`),
		chromedp.SendKeys(`form.create input[name="name"]`, "vision"),
		changeSelect(`form.create select[name="departmentId"]`, deptID),
		chromedp.SendKeys(`form.create input[name="namespaces"]`, "team-vision"),
		chromedp.SendKeys(`form.create input[name="deserved-`+def+`"]`, "4"),
		chromedp.Submit(`form.create input[name="name"]`),
		chromedp.WaitVisible(`#projects-table input[value="vision"]`),
	)
	if err != nil {
		t.Fatalf("create the project: %v", err)
	}
	_, list = a.do(t, "GET", "/api/v1/org-unit/projects?filterBy=name==vision", "")
	projects, _ := list["projects"].([]any)
	if len(projects) != 1 {
		t.Fatalf("the API lists %v", list)
	}
	proj := projects[0].(map[string]any)
	quota := "#project-" + proj["id"].(string) + ` form.quota[data-pool="default"]`

	// An edit inside the department's share is saved.
	err = chromedp.Do(ctx,
		htmxIdle(),
		changeSelect(quota+` input[name="deserved"]`, "6"),
		chromedp.WaitVisible(quota+`.saved`),
	)
	if err != nil {
		t.Fatalf("edit the quota: %v", err)
	}
	_, got := a.do(t, "GET", "/api/v1/org-unit/projects/"+proj["id"].(string), "")
	if res, _ := got["resources"].([]any); len(res) != 1 || res[0].(map[string]any)["gpu"].(map[string]any)["deserved"] != float64(6) {
		t.Errorf("after the edit the API shows %v", got["resources"])
	}

	// One beyond it is refused, with the numbers, next to the quota.
	err = chromedp.Do(ctx,
		htmxIdle(),
		changeSelect(quota+` input[name="deserved"]`, "12"),
		chromedp.WaitVisible(quota+`.refused .field-error`),
	)
	if err != nil {
		t.Fatalf("over-share edit: %v", err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(quota+` .field-error`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "projects-quota-over-department-share")
	if want := "department research has 8 deserved GPUs in pool default; its projects would have 12, 4 more"; !strings.Contains(msg, want) {
		t.Errorf("the message next to the quota is %q, want it to say %q", msg, want)
	}
	typed, err := chromedp.Run(ctx, chromedp.Value(quota+` input[name="deserved"]`))
	if err != nil || typed != "12" {
		t.Errorf("the refused value typed is %q (%v), want it kept for correction", typed, err)
	}
	_, got = a.do(t, "GET", "/api/v1/org-unit/projects/"+proj["id"].(string), "")
	if res, _ := got["resources"].([]any); res[0].(map[string]any)["gpu"].(map[string]any)["deserved"] != float64(6) {
		t.Errorf("the refused edit was saved: %v", got["resources"])
	}
}
