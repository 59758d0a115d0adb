package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserEveryPageReadsAt1280 opens every page of the main navigation as an admin, with a
// project and running and waiting Jobs behind them, at 1280 px wide: no page scrolls
// sideways, every form control has a label a screen reader can read, and a screenshot of each
// is saved as an artifact (console.md: the console reads at 1280 px with labels and keyboard
// access).
func TestBrowserEveryPageReadsAt1280(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("pages", 2, store.PolicyUpdate{})
	e.job(jobSpec{name: "runs", namespace: ns, pods: 2, labels: labels("low", "preemptible")})
	e.eventually("runs runs", 2*time.Minute, func() bool { return e.running(ns, "runs") == 2 })
	e.job(jobSpec{name: "waits", namespace: ns, labels: labels("high", "non-preemptible")})

	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	loginAsAdmin(t, ctx, e.a)
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('nav.sidenav ul a')].map(a => a.getAttribute('href'))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(links) < 10 {
		t.Fatalf("the admin's navigation has %d links: %v", len(links), links)
	}
	for _, href := range links {
		err := chromedp.Do(ctx, chromedp.Navigate(e.a.URL+href), chromedp.WaitVisible(`main`), htmxIdle())
		if err != nil {
			t.Fatalf("open %s: %v", href, err)
		}
		name := "page" + strings.ReplaceAll(strings.TrimSuffix(href, "/"), "/", "-")
		if href == "/" {
			name = "page-overview"
		}
		screenshot(t, ctx, name)
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if wide > 1280 {
			t.Errorf("%s is %d px wide at a 1280 px window: it scrolls sideways", href, wide)
		}
		// A table clips what does not fit (overflow: hidden): wider content is cut off, not
		// scrolled, so each table's content must fit its box.
		clipped, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.table')]
			.filter(el => el.scrollWidth > el.clientWidth + 1)
			.map(el => (el.id || el.className) + ': ' + el.scrollWidth + ' > ' + el.clientWidth)`))
		if err != nil {
			t.Fatal(err)
		}
		if len(clipped) > 0 {
			t.Errorf("%s has tables wider than their box at 1280 px: %v", href, clipped)
		}
		// A <table> is as wide as its cells; what clips it is its container, so no cell may end
		// beyond the main column's right edge.
		beyond, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
			const edge = document.querySelector('main').getBoundingClientRect().right;
			return [...document.querySelectorAll('th, td, .th, .td')]
				.filter(el => el.getBoundingClientRect().right > edge + 1)
				.map(el => el.textContent.trim().slice(0, 30) + ' ends at ' + Math.round(el.getBoundingClientRect().right) + ' > ' + Math.round(edge));
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if len(beyond) > 0 {
			t.Errorf("%s has table cells beyond the page's right edge at 1280 px: %v", href, beyond)
		}
		unlabelled, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
			.filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
			.map(el => el.outerHTML.slice(0, 120))`))
		if err != nil {
			t.Fatal(err)
		}
		if len(unlabelled) > 0 {
			t.Errorf("%s has controls without a label: %v", href, unlabelled)
		}
	}
}
