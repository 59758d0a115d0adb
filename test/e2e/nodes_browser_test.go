package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

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
	deadline := time.Now().Add(90 * time.Second)
	for {
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
		if trainCells == 2 && tuneCells == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
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
