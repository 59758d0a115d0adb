package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserEveryPageReadsAt1280And800 opens every page of the main navigation (and a
// workload's story) as an admin, with projects and running, waiting and locked Jobs behind
// them, at 1280 and at 800 px wide: no page scrolls sideways (at 800 px a wide table scrolls
// inside its own box), the navigation is reachable at both widths without taking a column at
// 800 px, nothing is cut off, no word breaks except at a sensible point, every select is as
// wide as its longest option, every form control has a label a screen reader can read, and a
// screenshot of each is saved as an artifact (console.md: the console reads at 1280 px with
// labels and keyboard access, and at 800 px with the navigation on top).
func TestBrowserEveryPageReadsAt1280And800(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	ns := e.project("pages", 2, store.PolicyUpdate{})
	fixed := e.project("fixed", 2, store.PolicyUpdate{AllowPriorityChange: opt(false)})
	e.job(jobSpec{name: "runs", namespace: ns, pods: 2, labels: labels("low", "preemptible")})
	e.job(jobSpec{name: "fixed-one", namespace: fixed, deadline: 3600, labels: labels("low", "preemptible")})
	e.eventually("runs runs", 2*time.Minute, func() bool { return e.running(ns, "runs") == 2 && e.running(fixed, "fixed-one") == 1 })
	// Waits for fixed-one's GPU until its deadline: the Queue cell has an estimated start.
	next := e.job(jobSpec{name: "fixed-next", namespace: fixed, gpus: 2, labels: labels("low", "preemptible")})
	e.eventually("fixed-next has an estimated start", 2*time.Minute, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, string(next.UID))
		return err == nil && r.EstimatedStartAt != nil
	})
	waits := e.job(jobSpec{name: "waits", namespace: ns, gpus: 8, labels: labels("high", "non-preemptible")})
	e.eventually("waits is recorded as waiting", 2*time.Minute, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, string(waits.UID))
		return err == nil && r.Reason != ""
	})

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
	links = append(links, "/workloads/"+string(waits.UID))
	for _, width := range []int64{1280, 800} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		for _, href := range links {
			// As CSS: a plain string is also searched as text, so "main" would wait
			// for ever on the text node of a page that says "domain".
			err := chromedp.Do(ctx, chromedp.Navigate(e.a.URL+href), chromedp.WaitVisible(chromedp.CSS(`main`)), htmxIdle())
			if err != nil {
				t.Fatalf("open %s: %v", href, err)
			}
			name := "page" + strings.ReplaceAll(strings.TrimSuffix(href, "/"), "/", "-")
			if href == "/" {
				name = "page-overview"
			}
			if strings.HasPrefix(href, "/workloads/") {
				name = "page-workload-story"
			}
			screenshot(t, ctx, fmt.Sprintf("%s-%d", name, width))
			readsAt(t, ctx, href, width)
			// And with every disclosure open (a project's policy form, a department's fence).
			opened, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => { const d = [...document.querySelectorAll('main details:not([open])')]; d.forEach(x => x.open = true); return d.length; })()`))
			if err != nil {
				t.Fatal(err)
			}
			if opened > 0 {
				screenshot(t, ctx, fmt.Sprintf("%s-open-%d", name, width))
				readsAt(t, ctx, href+" (disclosures open)", width)
			}
		}
	}
}

// readsAt checks the page open in ctx at a window width px wide.
func readsAt(t *testing.T, ctx context.Context, href string, width int64) {
	t.Helper()
	check := func(what, js string) {
		t.Helper()
		found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](js))
		if err != nil {
			t.Fatalf("%s at %d px: %v", href, width, err)
		}
		if len(found) > 0 {
			t.Errorf("%s at %d px: %s: %v", href, width, what, found)
		}
	}
	// Named by the outermost elements that reach beyond the window outside a box that scrolls.
	check("the page scrolls sideways", `(() => {
		const d = document.documentElement;
		if (d.scrollWidth <= window.innerWidth) return [];
		const scrolls = el => { for (let p = el.parentElement; p; p = p.parentElement) {
			const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
		const beyond = [...document.body.querySelectorAll('*')].filter(el => el.getBoundingClientRect().right > window.innerWidth + 1 &&
			(!scrolls(el) || getComputedStyle(el).position === 'absolute'));
		return [d.scrollWidth + ' > ' + window.innerWidth].concat(beyond.filter(el => !beyond.includes(el.parentElement)).slice(0, 5)
			.map(el => el.tagName + '.' + el.className + '#' + el.id + ' ends at ' + Math.round(el.getBoundingClientRect().right)));
	})()`)
	// Every link of the navigation can be seen and clicked: inside the window and on top.
	check("navigation links out of reach", `[...document.querySelectorAll('nav.sidenav ul a')].filter(a => {
		const r = a.getBoundingClientRect();
		if (r.width < 1 || r.height < 1 || r.left < 0 || r.right > window.innerWidth + 1 || r.top < 0) return true;
		const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
		return !(hit && a.contains(hit));
	}).map(a => a.textContent.trim())`)
	if width < 900 {
		// Narrow: the navigation sits above the page, which gets the window's whole width.
		check("the navigation takes a column of a narrow window", `(() => {
			const m = document.querySelector('main').getBoundingClientRect();
			return m.width < window.innerWidth - 20 ? ['main is ' + Math.round(m.width) + ' px of ' + window.innerWidth] : [];
		})()`)
	}
	// Content is never cut off: a box whose content is wider than itself must scroll, and only
	// at a narrow width; at 1280 px every table fits.
	check("content cut off or scrolled", `[...document.querySelectorAll('main *')].filter(el => {
		if (el.scrollWidth <= el.clientWidth + 1 || el.closest('select, .gpu, .sr-only')) return false;
		const o = getComputedStyle(el).overflowX;
		if (o === 'visible') return false;
		return !((o === 'auto' || o === 'scroll') && window.innerWidth < 900);
	}).map(el => (el.id || el.className || el.tagName) + ': ' + el.scrollWidth + ' > ' + el.clientWidth + ' (' + getComputedStyle(el).overflowX + ')')`)
	// The Workloads table is the console's main view: at every width each of a row's facts
	// is in sight without scrolling it sideways (a narrow window shows each row as a card).
	check("the Workloads table scrolls sideways", `[...document.querySelectorAll('#workloads-results')]
		.filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.scrollWidth + ' > ' + el.clientWidth)`)
	// A waiting workload's estimated start reads on one line: over three ("Nov 28 / 11:10 /
	// UTC") it made each waiting row of the table four lines tall.
	check("estimated starts over more than one line", `[...document.querySelectorAll('#workloads-results .estimate')].filter(el => {
		const r = document.createRange();
		r.selectNodeContents(el);
		return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1;
	}).map(el => el.textContent.trim())`)
	// A cell may end beyond the main column's right edge only inside a box that scrolls.
	check("table cells beyond the page's right edge", `(() => {
		const edge = document.querySelector('main').getBoundingClientRect().right;
		const scrolls = el => { for (let p = el.parentElement; p; p = p.parentElement) {
			const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
		return [...document.querySelectorAll('th, td, .th, .td')]
			.filter(el => el.getBoundingClientRect().right > edge + 1 && !scrolls(el))
			.map(el => el.textContent.trim().slice(0, 30) + ' ends at ' + Math.round(el.getBoundingClientRect().right) + ' > ' + Math.round(edge));
	})()`)
	// Words break only at a sensible point (brokenWordsJS).
	check("words broken mid-word", brokenWordsJS)
	// A select is as wide as its longest option: a copy of it free to size itself is no wider.
	check("selects narrower than their longest option", `[...document.querySelectorAll('main select')].filter(s => s.offsetParent).map(s => {
		const c = s.cloneNode(true);
		c.removeAttribute('id');
		c.style.cssText = 'position:absolute;visibility:hidden;width:auto;min-width:0;max-width:none;left:0;top:0';
		s.parentElement.appendChild(c);
		const want = c.offsetWidth;
		c.remove();
		return s.offsetWidth + 1 < want ? (s.name || s.getAttribute('aria-label')) + ': ' + s.offsetWidth + ' < ' + want : '';
	}).filter(Boolean)`)
	// An empty input's placeholder ("no limit") reads whole: its text, in the input's own font,
	// fits inside the input's padding, less a number input's spin buttons (Chromium keeps their
	// 15 px for them, shown or not).
	check("placeholders cut off", `(() => {
		const ctx = document.createElement('canvas').getContext('2d');
		return [...document.querySelectorAll('main input[placeholder]')].filter(el => el.offsetParent && !el.value).map(el => {
			const cs = getComputedStyle(el);
			ctx.font = cs.font;
			const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - (el.type === 'number' ? 15 : 0);
			const need = ctx.measureText(el.placeholder).width;
			return need > room + 0.5 ? (el.name || el.getAttribute('aria-label')) + ' "' + el.placeholder + '": ' + Math.ceil(need) + ' > ' + Math.floor(room) : '';
		}).filter(Boolean);
	})()`)
	check("controls without a label", `[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
		.filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
		.map(el => el.outerHTML.slice(0, 120))`)
}

// brokenWordsJS lists the words of the page that a line break splits anywhere but at a
// sensible point: at a space, after - _ . / : or between a lower-case letter or digit and a
// capital (InsufficientCapacity may wrap as Insufficient|Capacity, never as
// InsufficientCapa|city). GPU cells, whose names are cut to fit, and options are left out.
const brokenWordsJS = `(() => {
		const out = [];
		const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		const range = document.createRange();
		for (let n = walker.nextNode(); n; n = walker.nextNode()) {
			const s = n.data;
			if (!s.trim() || n.parentElement.closest('script, style, .gpu, option, select, .sr-only')) continue;
			let prevTop = null, prevBottom = null;
			for (let i = 0; i < s.length; i++) {
				if (/\s/.test(s[i])) { prevTop = null; continue; }
				range.setStart(n, i); range.setEnd(n, i + 1);
				const r = range.getClientRects()[0];
				if (!r) { prevTop = null; continue; }
				if (prevTop !== null && r.top >= prevBottom - 1) {
					const a = s[i - 1], b = s[i];
					const ok = /[-_./:,;)\]]/.test(a) || /[(\[]/.test(b) || (/[a-z0-9]/.test(a) && /[A-Z]/.test(b));
					if (!ok) out.push(s.slice(Math.max(0, i - 15), i) + '|' + s.slice(i, i + 15));
				}
				prevTop = r.top; prevBottom = r.bottom;
			}
		}
		return out.slice(0, 10);
	})()`

// noBrokenWords fails the test for each word of the page split mid-word.
func noBrokenWords(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	broken, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](brokenWordsJS))
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) > 0 {
		t.Errorf("%s: words broken mid-word: %v", where, broken)
	}
}
