package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserSubmitKeepsAPickedDefault: on the Submit page (at 1280 and 800 px) in a project
// whose default priority is low, a person who picks low submits a Job labelled low, and one who
// leaves the default submits a Job without the label; when the project's default becomes
// medium, the first stays low and the second follows.
func TestBrowserSubmitKeepsAPickedDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	ns := e.project("pick", 4, store.PolicyUpdate{DefaultPriorityID: opt(e.priorityID("low"))})
	e.localUser(t, "rina", "rina-password-1", "researcher")
	ctx := newBrowser(t)
	loginAs(t, ctx, e.a, "rina", "rina-password-1", "researcher")

	uids := map[string]string{}
	for _, s := range []struct {
		width    int64
		name     string
		priority string // "" leaves the default
	}{{1280, "picked", "low"}, {800, "left", ""}} {
		actions := []chromedp.Action[chromedp.Void]{
			chromedp.EmulateViewport(s.width, 900),
			chromedp.Navigate(e.a.URL + "/submit"),
			chromedp.WaitVisible(`#submit-form input[name="name"]`),
			htmxIdle(),
			chromedp.SendKeys(`#submit-form input[name="name"]`, s.name),
			chromedp.SendKeys(`#submit-form input[name="spec.image"]`, "example.invalid/train:1"),
		}
		if s.priority != "" {
			actions = append(actions, changeSelect(`#submit-form select[name="spec.priorityClass"]`, s.priority))
		}
		actions = append(actions, chromedp.WaitVisible(`#dry-run p.outcome`), htmxIdle())
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatal(err)
		}
		chosen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#submit-form select[name="spec.priorityClass"]').selectedOptions[0].text`))
		if want := map[string]string{"low": "low", "": "default (low)"}[s.priority]; err != nil || chosen != want {
			t.Errorf("at %d px the priority shows %q (%v), want %q", s.width, chosen, err, want)
		}
		screenshot(t, ctx, fmt.Sprintf("submit-priority-%s-%d", s.name, s.width))
		if err := chromedp.Do(ctx, chromedp.Click(`#submit-form button[type="submit"]`), chromedp.WaitVisible(`#story-summary`)); err != nil {
			t.Fatal(err)
		}
		job, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, s.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := job.Labels["priorityClassName"]; got != s.priority {
			t.Errorf("Job %s has priorityClassName %q, want %q", s.name, got, s.priority)
		}
		uids[s.name] = string(job.UID)
	}

	e.eventually("both are recorded at low", time.Minute, func() bool {
		for _, uid := range uids {
			if r, err := e.store.WorkloadRecord(e.ctx, uid); err != nil || r.PriorityName != "low" || r.Phase != "Running" {
				return false
			}
		}
		return true
	})
	p, err := e.store.ProjectNamed(e.ctx, "pick-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.UpdateProject(e.ctx, p.ID, store.ProjectUpdate{Policy: store.PolicyUpdate{DefaultPriorityID: opt(e.priorityID("medium"))}}, admin); err != nil {
		t.Fatal(err)
	}
	e.eventually("the one left to the default follows it to medium", time.Minute, func() bool { return e.record(uids["left"]).PriorityName == "medium" })
	if got := e.record(uids["picked"]).PriorityName; got != "low" {
		t.Errorf("the one submitted with low picked is at %s, want low", got)
	}
}
