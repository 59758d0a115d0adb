package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestBrowserResearchManagerEditsOnlyTheInsideOfTheProjectPolicy: a project's research manager
// opens its policy form. It offers the fields that stay inside the project and none of those
// that change what other projects receive (priority policy and offset, preemption delay,
// reclaim minimum runtime); changing the queueing saves it; a priority offset forged into the
// form is refused beside the form with the API's sentence, and nothing of that change is saved.
func TestBrowserResearchManagerEditsOnlyTheInsideOfTheProjectPolicy(t *testing.T) {
	t.Parallel()
	dbURL := freshDatabase(t)
	a := startArbiter(t, server.Config{DatabaseURL: dbURL})
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool)
	status, dept := a.do(t, "POST", "/api/v1/org-unit/departments", `{"name":"research"}`)
	if status != 201 {
		t.Fatalf("create department: %d %v", status, dept)
	}
	status, proj := a.do(t, "POST", "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":"vision","departmentId":%q}`, dept["id"]))
	if status != 201 {
		t.Fatalf("create project: %d %v", status, proj)
	}
	id := proj["id"].(string)
	pid := uuid.MustParse(id)
	if _, err := st.EnsureLocalUser(context.Background(), "rosa", "rosa", true, func() (string, error) { return auth.HashPassword("rosa-password-1") }); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAccessRule(context.Background(), store.NewAccessRule{SubjectType: "user", Subject: "rosa", Role: "research-manager",
		ScopeType: "project", ScopeID: &pid}, store.Actor{Subject: "e2e", SubjectType: "system"}); err != nil {
		t.Fatal(err)
	}

	ctx := newBrowser(t)
	loginAs(t, ctx, a, "rosa", "rosa-password-1", "research-manager")
	row := "#project-" + id
	form := row + ` form[action="/projects/` + id + `/policy"]`
	err = chromedp.Do(ctx,
		chromedp.Navigate(a.URL+"/projects"),
		chromedp.WaitVisible(row+` details.policy summary`),
		chromedp.Click(row+` details.policy summary`),
		chromedp.WaitVisible(form+` select[name="queueing"]`),
		htmxIdle(),
	)
	if err != nil {
		t.Fatalf("open the policy form: %v", err)
	}
	offered, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(`+jsString(form+` [name]`)+`)).map(e => e.name)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"defaultPriorityId", "minPriority", "maxPriority", "preemptionOrder", "preemptionMode", "minRuntimeSeconds", "queueing"} {
		if !slices.Contains(offered, f) {
			t.Errorf("the research manager's policy form lacks %s: %v", f, offered)
		}
	}
	for _, f := range []string{"priorityPolicy", "priorityOffset", "preemptionDelaySeconds", "reclaimMinRuntimeSeconds"} {
		if slices.Contains(offered, f) {
			t.Errorf("the research manager's policy form offers %s, which is the department admin's", f)
		}
	}

	// A field that stays inside the project is saved.
	err = chromedp.Do(ctx,
		changeSelect(form+` select[name="queueing"]`, "strict"),
		chromedp.WaitVisible(form+` .ok[role="status"]`),
	)
	if err != nil {
		t.Fatalf("save the queueing: %v", err)
	}
	if _, got := a.do(t, "GET", "/api/v1/org-unit/projects/"+id, ""); got["policy"].(map[string]any)["queueing"] != "strict" {
		t.Errorf("after the save the API shows %v", got["policy"])
	}

	// An offset forged into the form is refused whole, with the API's sentence.
	err = chromedp.Do(ctx,
		htmxIdle(),
		chromedp.Evaluate[chromedp.Void](`(() => {
			const input = document.createElement('input');
			input.type = 'hidden'; input.name = 'priorityOffset'; input.value = '500';
			document.querySelector(`+jsString(form)+`).appendChild(input);
		})()`),
		changeSelect(form+` select[name="queueing"]`, "best-effort"),
		chromedp.WaitVisible(form+` .field-error`),
	)
	if err != nil {
		t.Fatalf("forge an offset: %v", err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(form+` .field-error`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "projects-policy-forged-offset")
	if _, got := a.do(t, "GET", "/api/v1/org-unit/projects/"+id, ""); got["policy"].(map[string]any)["queueing"] != "strict" || got["policy"].(map[string]any)["priorityOffset"] != float64(0) {
		t.Errorf("the refused change was saved: %v", got["policy"])
	}
	// The API's sentence for the same change (docs/security.md "Who changes which organization field").
	if want := "you may not change policy.priorityOffset: it is the department's to decide"; !strings.Contains(msg, want) {
		t.Errorf("the refusal beside the form is %q, want it to say %q", msg, want)
	}
}
