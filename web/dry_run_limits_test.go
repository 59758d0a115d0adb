package web_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/arbiterhq/arbiter/web"
)

// TestDryRunsAreBoundedPerCallerAndPerReplica: a dry run asks the replica's one limiter for a
// slot. With a caller's slots all taken, its next dry run is refused with 429, Retry-After and
// a sentence saying how many it already runs, before the scheduler is asked; another caller
// still gets through until the replica's slots are all taken, and then is refused alike. A
// slot given back lets the next one through. The Submit page's panel says the same sentence in
// the panel. Slots are held through the limiter itself, so nothing here depends on timing.
func TestDryRunsAreBoundedPerCallerAndPerReplica(t *testing.T) {
	t.Parallel()
	fs := &fakeForesight{}
	limits := web.NewDryRunLimits(3, 2)
	f := newSubmitAPIWith(t, func(d *web.Deps) { d.Foresee = fs; d.DryRuns = limits })
	researcher := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	colleague := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	body := fmt.Sprintf(`{"name":"train-a","projectId":%q,"spec":{"image":"python:3.12","compute":{"gpuDevicesRequest":2}}}`, f.alpha)
	dryRun := func(token string) response { return f.submit(t, token, "trainings?dryRun=true", body) }
	hold := func(caller string) func() {
		t.Helper()
		release, err := limits.Acquire(caller)
		if err != nil {
			t.Fatalf("the limiter refused %s a slot the test expected free: %v", caller, err)
		}
		return release
	}

	// The researcher holds both of their slots: their next dry run is refused.
	first, second := hold(keySubmitter(t, researcher)), hold(keySubmitter(t, researcher))
	r := dryRun(researcher)
	if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(r.refusal(t).Message, "you already have 2 dry runs running") {
		t.Errorf("a third dry run of one caller = %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if n := len(fs.asked()); n != 0 {
		t.Errorf("the scheduler was asked %d times for a refused dry run", n)
	}

	// Another caller gets through: the replica runs 2 of its 3.
	if r := dryRun(colleague); r.status != 200 {
		t.Errorf("another caller's dry run = %d %s", r.status, r.body)
	}

	// A third caller takes the replica's last slot: everyone is refused, with the replica's sentence.
	third := hold("api-key:someone-else")
	r = dryRun(colleague)
	if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(r.refusal(t).Message, "already runs 3 dry runs") {
		t.Errorf("a dry run past the replica's bound = %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}

	// The Submit page's panel shows the sentence in the panel: the fragment htmx swaps in
	// for #dry-run, answered 200 so that it is swapped in.
	form := url.Values{"type": {"trainings"}, "projectId": {f.alpha}, "name": {"urgent"}, "spec.image": {"python:3.12"},
		"spec.compute.gpuDevicesRequest": {"2"}}
	panel := pageAs(t, f.srv, researcher, "/submit/dry-run", form, true, 200)
	aside := findNode(panel, func(n *html.Node) bool { return n.Data == "aside" && attr(n, "id") == "dry-run" })
	if aside == nil || !strings.Contains(textOf(aside), "you already have 2 dry runs running") || strings.Contains(textOf(aside), "Would preempt") {
		t.Errorf("the panel of a refused dry run = %s", textOf(panel))
	}

	// Slots given back let dry runs through again.
	third()
	first()
	if r := dryRun(colleague); r.status != 200 {
		t.Errorf("after a slot was given back, another caller's dry run = %d %s", r.status, r.body)
	}
	if r := dryRun(researcher); r.status != 200 {
		t.Errorf("after one of their slots was given back, the researcher's dry run = %d %s", r.status, r.body)
	}
	second()
	if n := len(fs.asked()); n != 3 {
		t.Errorf("the scheduler was asked %d times, want 3 (the dry runs let through)", n)
	}
}
