package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserWorkloadsSayALockOnce opens the Workloads page at 1280 and 800 px with three
// running Jobs of a project whose policy forbids changes of priority and of preemptibility:
// their rows stay as low as an unlocked row, the policy's sentence is shown once on the page
// (not under every row), and each locked select names it as its description, which a row's
// short label links to.
func TestBrowserWorkloadsSayALockOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	free := e.project("free", 1, store.PolicyUpdate{})
	fixed := e.project("fixed", 3, store.PolicyUpdate{AllowPriorityChange: opt(false), AllowPreemptibilityChange: opt(false)})
	e.job(jobSpec{name: "open", namespace: free, labels: labels("low", "preemptible")})
	for i := 0; i < 3; i++ {
		e.job(jobSpec{name: fmt.Sprintf("fixed-%d", i), namespace: fixed, labels: labels("low", "preemptible")})
	}
	e.eventually("four Jobs run", 2*time.Minute, func() bool {
		n := e.running(free, "open")
		for i := 0; i < 3; i++ {
			n += e.running(fixed, fmt.Sprintf("fixed-%d", i))
		}
		return n == 4
	})
	const why = "does not allow changing priority"

	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, e.a)
	for _, width := range []int64{1280, 800} {
		err := chromedp.Do(ctx,
			chromedp.EmulateViewport(width, 900),
			chromedp.Navigate(e.a.URL+"/workloads"),
			chromedp.WaitVisible(`#workloads-table select[name="priority"]:disabled`),
			htmxIdle(),
		)
		if err != nil {
			t.Fatal(err)
		}
		// Wait for all four rows (the scheduler records them in its cycles).
		if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelectorAll('#workloads-table tr.workload-row').length === 4`)); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, fmt.Sprintf("workloads-locked-%d", width))
		heights, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]int](`Object.fromEntries([...document.querySelectorAll('#workloads-table tr.workload-row')]
			.map(tr => [tr.querySelector('.workload-link').textContent.trim(), Math.round(tr.getBoundingClientRect().height)]))`))
		if err != nil {
			t.Fatal(err)
		}
		for name, h := range heights {
			if h > heights["open"]+8 || h > 90 {
				t.Errorf("at %d px the row of %s is %d px high (the unlocked row is %d px)", width, name, h, heights["open"])
			}
		}
		// The sentence is on the page once, where a person reads it.
		seen, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelector('main').innerText.split(`+jsString(why)+`).length - 1`))
		if err != nil || seen != 1 {
			t.Errorf("at %d px the page shows %q %d times (%v), want once", width, why, seen, err)
		}
		// Each locked select is described by the sentence, and its row links to it.
		wrong, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#workloads-table tr.workload-row')]
			.filter(tr => tr.querySelector('.workload-link').textContent.trim() !== 'open')
			.flatMap(tr => {
				const name = tr.querySelector('.workload-link').textContent.trim();
				const out = [];
				for (const f of ['priority', 'preemptibility']) {
					const s = tr.querySelector('select[name="' + f + '"]');
					const ids = (s && s.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
					const said = ids.map(id => (document.getElementById(id) || {textContent: ''}).textContent).join(' ');
					if (!s || !s.disabled || !said.includes('does not allow changing ' + f)) out.push(name + ' ' + f + ': described as ' + JSON.stringify(said));
				}
				const link = tr.querySelector('a.lock-ref');
				const target = link && document.getElementById(link.getAttribute('href').slice(1));
				if (!target || !target.textContent.includes(`+jsString(why)+`) || target.getBoundingClientRect().height < 1) out.push(name + ': no visible sentence linked from the row');
				return out;
			})`))
		if err != nil {
			t.Fatal(err)
		}
		if len(wrong) > 0 {
			t.Errorf("at %d px: %v", width, wrong)
		}
	}
}
