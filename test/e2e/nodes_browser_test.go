package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserNodesGridNamesHolder runs real Jobs of two projects that Arbiter binds on the
// local control plane, and finds on the Nodes page (filtered to the test's pool) GPU cells
// that name the workload holding them, with its resolved priority and preemptibility, in the
// hover title and in the text a screen reader reads.
func TestBrowserNodesGridNamesHolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 4)
	vision := e.project("vision", 4, store.PolicyUpdate{})
	speech := e.project("speech", 4, store.PolicyUpdate{})
	e.job(jobSpec{name: "train-grid", namespace: vision, pods: 2, labels: labels("high", "non-preemptible")})
	e.job(jobSpec{name: "tune-grid", namespace: speech, pods: 1, gpus: 2, labels: labels("low", "preemptible")})
	e.eventually("both Jobs' pods are bound", 2*time.Minute, func() bool {
		return e.running(vision, "train-grid") == 2 && e.running(speech, "tune-grid") == 1
	})

	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, e.a)
	page := e.a.URL + "/nodes?pool=" + e.pool.Name
	train := vision + "/train-grid (project " + vision + ", priority high, non-preemptible)"
	tune := speech + "/tune-grid (project " + speech + ", priority low, preemptible)"
	// The page shows the scheduler's last cycle; the cycle after the binds sees the pods on
	// their nodes. Reload until it does.
	count := `(w) => [...document.querySelectorAll('ul.gpu-grid li.gpu-held')].filter(li =>
		li.title.endsWith(w) && li.querySelector('.sr-only').textContent.endsWith(w)).length`
	var trainCells, tuneCells int
	// A timeout is reported below, after the screenshot, with the page's text.
	poll.Within(90*time.Second, func() bool {
		err := chromedp.Do(ctx,
			chromedp.Navigate(page),
			chromedp.WaitVisible(`ul.node-list`),
		)
		if err != nil {
			t.Fatal(err)
		}
		trainCells, err = chromedp.Run(ctx, chromedp.Evaluate[int](`(`+count+`)(`+jsString(train)+`)`))
		if err != nil {
			t.Fatal(err)
		}
		tuneCells, err = chromedp.Run(ctx, chromedp.Evaluate[int](`(`+count+`)(`+jsString(tune)+`)`))
		if err != nil {
			t.Fatal(err)
		}
		return trainCells == 2 && tuneCells == 2
	})
	screenshot(t, ctx, "nodes")
	if trainCells != 2 || tuneCells != 2 {
		body, _ := chromedp.Run(ctx, chromedp.Text(`main`))
		t.Fatalf("GPU cells naming train-grid: %d, tune-grid: %d; want 2 and 2:\n%s", trainCells, tuneCells, body)
	}

	// Only the test's pool is shown (the shared cluster has other tests' nodes); its 8 GPUs,
	// 4 of them held, the rest free.
	nodes, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('li.node h2')].map(h => h.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || !strings.Contains(nodes[0], e.pool.Name) || !strings.Contains(nodes[1], e.pool.Name) {
		t.Errorf("nodes shown for pool %s: %v", e.pool.Name, nodes)
	}
	free, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('ul.gpu-grid li.gpu-free').length`))
	if err != nil {
		t.Fatal(err)
	}
	if free != 4 {
		t.Errorf("free GPU cells: %d, want 4", free)
	}

	// Filtered by project: only the nodes holding vision's GPUs, other cells dimmed.
	err = chromedp.Do(ctx,
		chromedp.Navigate(page+"&project="+vision),
		chromedp.WaitVisible(`ul.node-list`),
	)
	if err != nil {
		t.Fatal(err)
	}
	undimmed, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('ul.gpu-grid li.gpu:not(.gpu-dim)').length`))
	if err != nil {
		t.Fatal(err)
	}
	if undimmed != 2 {
		t.Errorf("cells of project %s not dimmed: %d, want 2", vision, undimmed)
	}
	screenshot(t, ctx, "nodes-filtered-by-project")

	// The grid refreshes itself: a Job started after the page loaded shows up in its cells.
	e.job(jobSpec{name: "late-grid", namespace: vision, labels: labels("high", "non-preemptible")})
	late := vision + "/late-grid (project " + vision + ", priority high, non-preemptible)"
	err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`(`+count+`)(`+jsString(late)+`) === 1`, chromedp.WithPollingTimeout(2*time.Minute)))
	if err != nil {
		t.Errorf("the grid did not show late-grid without a reload: %v", err)
	}
}

// TestBrowserNodesGridTellsProjectsApart runs Jobs of ads, search and vision — names that once
// hashed to one green — on the same two nodes, and finds on the Nodes page, at 1280 and at
// 800 px, each project's cells in a colour and pattern of its own that the legend repeats, named
// in the cell; filtered by a project, its cells keep their swatch. Nothing in a node's card is
// wider or taller than its box.
func TestBrowserNodesGridTellsProjectsApart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 4)
	var names []string
	for _, p := range []string{"ads", "search", "vision"} {
		ns := e.project(p, 4, store.PolicyUpdate{})
		names = append(names, ns)
		e.job(jobSpec{name: p + "-grid", namespace: ns, pods: 2, labels: labels("low", "preemptible")})
	}
	e.eventually("the three Jobs' pods are bound", 2*time.Minute, func() bool {
		for _, ns := range names {
			if e.running(ns, strings.Split(ns, "-")[0]+"-grid") != 2 {
				return false
			}
		}
		return true
	})

	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, e.a)
	page := e.a.URL + "/nodes?pool=" + e.pool.Name
	// Each named project's swatch classes in the cells (every cell of a project alike, else
	// "mixed") and in the legend.
	swatches := `(() => {
		const sw = el => [...el.classList].filter(c => /^gpu-[cp]\d+$/.test(c)).sort().join(' ');
		const cells = {}, legend = {};
		for (const li of document.querySelectorAll('ul.gpu-grid li.gpu-held')) {
			const p = li.querySelector('.gpu-project').textContent.trim();
			cells[p] = (cells[p] === undefined || cells[p] === sw(li)) ? sw(li) : 'mixed';
		}
		for (const li of document.querySelectorAll('ul.gpu-legend li')) {
			const s = sw(li.querySelector('.swatch'));
			if (s) legend[li.textContent.trim()] = s;
		}
		return {cells, legend};
	})()`
	type seen struct {
		Cells, Legend map[string]string
	}
	var whole seen
	for _, width := range []int64{1280, 800} {
		w := fmt.Sprint(width)
		var got seen
		// The page shows the last cycle; the cycle after the binds sees all six pods. A
		// timeout is reported below, after the screenshot.
		poll.Within(90*time.Second, func() bool {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(page), chromedp.WaitVisible(`ul.node-list`)); err != nil {
				t.Fatal(err)
			}
			var err error
			if got, err = chromedp.Run(ctx, chromedp.Evaluate[seen](swatches)); err != nil {
				t.Fatal(err)
			}
			return len(got.Cells) == 3
		})
		screenshot(t, ctx, "nodes-projects-"+w)
		if len(got.Cells) != 3 {
			t.Fatalf("at %s px the grid names %v, want the three projects", w, got.Cells)
		}
		colours := map[string]string{}
		for p, s := range got.Cells {
			if s == "mixed" || len(strings.Fields(s)) != 2 {
				t.Errorf("at %s px project %s's cells: %q, want one colour and one pattern", w, p, s)
				continue
			}
			c := strings.Fields(s)[0]
			if other, ok := colours[c]; ok {
				t.Errorf("at %s px projects %s and %s share colour %s", w, other, p, c)
			}
			colours[c] = p
		}
		if diff := cmp.Diff(got.Cells, got.Legend); diff != "" {
			t.Errorf("at %s px the legend differs from the cells (-cells +legend):\n%s", w, diff)
		}
		if whole.Cells == nil {
			whole = got
		} else if diff := cmp.Diff(whole.Cells, got.Cells); diff != "" {
			t.Errorf("the swatches at %s px differ from those at 1280 px (-1280 +%s):\n%s", w, w, diff)
		}
		clipped, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('li.node, .gpu-grid, .gpu-legend, li.gpu, .gpu-project')]
			.filter(el => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)
			.map(el => el.className + ' ' + (el.title || el.textContent.trim()).slice(0, 60) + ': ' + el.scrollWidth + 'x' + el.scrollHeight + ' > ' + el.clientWidth + 'x' + el.clientHeight)`))
		if err != nil {
			t.Fatal(err)
		}
		if len(clipped) > 0 {
			t.Errorf("at %s px, cut off: %v", w, clipped)
		}
		if wide, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`)); wide > 0 {
			t.Errorf("at %s px the page scrolls sideways by %d px", w, wide)
		}
	}

	// Filtered by a project, its cells keep their swatch.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(page+"&project="+names[1]), chromedp.WaitVisible(`ul.node-list`)); err != nil {
		t.Fatal(err)
	}
	filtered, err := chromedp.Run(ctx, chromedp.Evaluate[seen](swatches))
	if err != nil {
		t.Fatal(err)
	}
	if filtered.Cells[names[1]] != whole.Cells[names[1]] {
		t.Errorf("filtered by %s its cells are %q, unfiltered %q", names[1], filtered.Cells[names[1]], whole.Cells[names[1]])
	}
	screenshot(t, ctx, "nodes-projects-filtered")
}
