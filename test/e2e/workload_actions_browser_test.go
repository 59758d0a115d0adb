package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserWorkloadActionsAndClone: a researcher submits a training from the Submit page
// with CPU, memory, an environment variable and semi-preemptibility, which the Job in the
// cluster carries; on its page she stops it (the Job is suspended), runs it again (resumed),
// clones it (the Submit page comes back filled from the Job, under a new name) and deletes it
// after confirming (the Job is gone). Screenshots at 1280 and 800 pixels.
func TestBrowserWorkloadActionsAndClone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("lab", 2, store.PolicyUpdate{})
	// Two node pools for the project: its own and the default, so the form offers a choice.
	refs, err := e.store.ProjectRefs(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if r.Name == ns {
			if _, err := e.store.UpdateProject(e.ctx, r.ID, store.ProjectUpdate{NodePools: opt([]uuid.UUID{e.pool.ID, store.DefaultNodePoolID})}, admin); err != nil {
				t.Fatal(err)
			}
		}
	}
	poolBox := `#submit-form input[name="spec.nodePools"][value="` + e.pool.Name + `"]`
	e.localUser(t, "rita", "rita-password-1", "researcher")

	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	loginAs(t, ctx, e.a, "rita", "rita-password-1", "researcher")
	text := func(sel string) string {
		s, _ := chromedp.Run(ctx, chromedp.Text(sel))
		return s
	}
	var job *batchv1.Job // the Job the form submits, which the later steps act on
	if !t.Run("rita fills the Submit form and a line without '=' is refused beside the field", func(t *testing.T) {
		err = chromedp.Do(ctx,
			chromedp.Navigate(e.a.URL+"/submit"),
			chromedp.WaitVisible(`#submit-form input[name="name"]`),
			htmxIdle(),
			chromedp.SendKeys(`#submit-form input[name="name"]`, "tune"),
			chromedp.SendKeys(`#submit-form input[name="spec.image"]`, "example.invalid/train:1"),
			chromedp.SendKeys(`#submit-form input[name="spec.command"]`, "python tune.py"),
			chromedp.SendKeys(`#submit-form input[name="spec.compute.cpuCoreRequest"]`, "0.5"),
			chromedp.SendKeys(`#submit-form input[name="spec.compute.cpuMemoryRequest"]`, "256Mi"),
			chromedp.SendKeys(`#submit-form textarea[name="spec.environmentVariables"]`, "EPOCHS 3"),
			changeSelect(`#submit-form select[name="spec.preemptibility"]`, "semi-preemptible"),
			chromedp.Click(poolBox),
			chromedp.Poll[chromedp.Void](`document.querySelector('#dry-run').innerText.includes("has no '='")`),
			htmxIdle(),
		)
		if err != nil {
			t.Fatal(err)
		}
		// A line without '=' is refused beside the field, in words, and what was typed stays.
		if err := chromedp.Do(ctx, chromedp.Click(`#submit-form button[type="submit"]`), chromedp.WaitVisible(`#submit-form .field-error`)); err != nil {
			t.Fatal(err)
		}
		if got := text(`#submit-form .field-error`); got != `line 1 ("EPOCHS 3") has no '='; write one variable a line, as NAME=value` {
			t.Errorf("the refusal reads %q", got)
		}
		screenshot(t, ctx, "submit-refusal-1280")
	}) {
		return
	}

	if !t.Run("corrected, the form submits the Job she asked for", func(t *testing.T) {
		err = chromedp.Do(ctx,
			htmxIdle(),
			chromedp.SetValue(`#submit-form textarea[name="spec.environmentVariables"]`, "EPOCHS=3"),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#submit-form textarea').dispatchEvent(new Event('change', {bubbles: true}))`),
			chromedp.WaitVisible(`#dry-run .outcome`),
			htmxIdle(),
		)
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "submit-resources-1280")
		if err := chromedp.Do(ctx, chromedp.Click(`#submit-form button[type="submit"]`), chromedp.WaitVisible(`#workload-actions`)); err != nil {
			t.Fatal(err)
		}
		job, err = e.client.BatchV1().Jobs(ns).Get(e.ctx, "tune", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := job.Spec.Template.Spec.Containers[0]
		if cpu, mem := c.Resources.Requests[corev1.ResourceCPU], c.Resources.Requests[corev1.ResourceMemory]; cpu.String() != "500m" || mem.String() != "256Mi" ||
			len(c.Env) != 1 || c.Env[0].Name != "EPOCHS" || job.Labels["kai.scheduler/preemptibility"] != "semi-preemptible" {
			t.Errorf("the Job asks for %v, env %v, labels %v", c.Resources.Requests, c.Env, job.Labels)
		}
		if a := job.Spec.Template.Spec.Affinity; a == nil || a.NodeAffinity == nil ||
			a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != e.pool.Name {
			t.Errorf("the Job's affinity %+v does not require pool %s", a, e.pool.Name)
		}
		screenshot(t, ctx, "workload-actions-1280")
	}) {
		return
	}

	if !t.Run("Stop suspends the Job and Run puts it back in its project's queue", func(t *testing.T) {
		suspended := func() bool {
			j, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "tune", metav1.GetOptions{})
			return err == nil && j.Spec.Suspend != nil && *j.Spec.Suspend
		}
		if err := chromedp.Do(ctx, chromedp.Click(`#action-stop`), chromedp.WaitVisible(`#action-run`)); err != nil {
			t.Fatal(err)
		}
		if !suspended() || !strings.HasPrefix(text(`#action-done`), "Stopped") {
			t.Errorf("after Stop: suspended %v, the page says %q", suspended(), text(`#action-done`))
		}
		screenshot(t, ctx, "workload-stopped-1280")
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(800, 900), chromedp.Poll[chromedp.Void](`window.innerWidth === 800`)); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "workload-stopped-800")
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Click(`#action-run`), chromedp.WaitVisible(`#action-stop`)); err != nil {
			t.Fatal(err)
		}
		if suspended() || !strings.HasPrefix(text(`#action-done`), "Back in its project's queue") {
			t.Errorf("after Run: suspended %v, the page says %q", suspended(), text(`#action-done`))
		}
	}) {
		return
	}

	if !t.Run("Clone fills the Submit page from the Job", func(t *testing.T) {
		// Clone: the Submit page filled from the Job.
		screenshot(t, ctx, "workload-running-again-1280")
		if err := chromedp.Do(ctx, chromedp.Click(`#action-clone`), chromedp.WaitVisible(`#clone-of`), htmxIdle()); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`['name','spec.image','spec.command','spec.compute.cpuCoreRequest','spec.compute.cpuMemoryRequest','spec.environmentVariables','spec.preemptibility','spec.priorityClass']
			.map(n => document.querySelector('#submit-form [name="' + n + '"]').value).join('|')`))
		if want := "tune-2|example.invalid/train:1|python tune.py|0.5|256Mi|EPOCHS=3|semi-preemptible|"; err != nil || got != want {
			t.Errorf("the clone's form = %q (%v), want %q", got, err, want)
		}
		if checked, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector(`+jsString(poolBox)+`).checked`)); !checked {
			t.Errorf("the clone's pool %s is not ticked", e.pool.Name)
		}
		if note, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('#clone-note') || {}).innerText || ''`)); note != "" {
			t.Errorf("the clone of a workload in her own project says %q", note)
		}
		screenshot(t, ctx, "submit-clone-1280")
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(800, 900), chromedp.Poll[chromedp.Void](`window.innerWidth === 800`)); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "submit-clone-800")
	}) {
		return
	}

	t.Run("Delete, after confirming, removes the Job", func(t *testing.T) {
		e := e.in(t)
		// Delete, after confirming.
		err = chromedp.Do(ctx,
			chromedp.Navigate(e.a.URL+"/workloads/"+string(job.UID)),
			chromedp.WaitVisible(`#workload-actions`),
			chromedp.Click(`#action-delete`),
			chromedp.WaitVisible(`#action-delete-confirm`),
		)
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "workload-delete-confirm-800")
		if err := chromedp.Do(ctx, chromedp.Click(`#action-delete-confirm`), chromedp.WaitVisible(`#action-done`)); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(text(`#action-done`), "Deleted") {
			t.Errorf("after Delete the page says %q", text(`#action-done`))
		}
		screenshot(t, ctx, "workload-deleted-800")
		e.eventually("the Job is gone", time.Minute, func() bool {
			_, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "tune", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	})
}
