package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
)

// TestBrowserNodesGroupedByRack: the test's pool, four nodes of 4 GPUs in two racks of one
// block (devcluster's labels), is given a network topology; a Job that requires one rack in
// KAI's spelling runs. On the Nodes page, grouped by rack with the page's own select, at 1280
// and at 800 px: two racks, each with its two nodes, named with their block, each saying its
// free GPUs (2 where the Job landed, 8 in the other), nothing cut off, no sideways scroll; the
// Node pools page shows the pool's topology and the topology its levels and pool; the Job's
// page says the rack it landed in.
func TestBrowserNodesGroupedByRack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4, 4)
	topology, err := e.store.CreateNetworkTopology(e.ctx, "racks", devcluster.TopologyLevels, admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.UpdateNodePool(e.ctx, e.pool.ID, store.NodePoolUpdate{NetworkTopology: opt(topology.ID)}, admin); err != nil {
		t.Fatal(err)
	}
	team := e.project("team", 16, store.PolicyUpdate{})
	job := e.job(jobSpec{name: "one-rack", namespace: team, pods: 3, gpus: 2, labels: labels("high", "non-preemptible"),
		annotations: map[string]string{"kai.scheduler/topology-required-placement": devcluster.LabelTopologyRack}})
	e.eventually("the Job's three pods are bound", 2*time.Minute, func() bool { return e.running(team, "one-rack") == 3 })

	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, e.a)
	page := e.a.URL + "/nodes?pool=" + e.pool.Name
	group := "racks:" + devcluster.LabelTopologyRack
	type domain struct {
		Heading, Context, Free string
		Nodes                  []string
	}
	read := `[...document.querySelectorAll('section.domain')].map(s => ({
		Heading: s.querySelector('h2').textContent.trim().replace(/\s+/g, ' '),
		Context: s.querySelector('.domain-head .muted').textContent.trim(),
		Free: s.querySelector('.domain-free').textContent.trim().replace(/\s+/g, ' '),
		Nodes: [...s.querySelectorAll('li.node h3')].map(h => h.textContent.trim())}))`
	rack := func(i int) string { return fmt.Sprintf("%s-rack-%d", e.pool.Name, i) }
	block := e.pool.Name + "-block-0"
	landed := "" // the rack the Job's GPUs are held in
	for _, width := range []int64{1280, 800} {
		w := fmt.Sprint(width)
		var got []domain
		// Grouped as a person groups them: the select, then Apply. The page shows the last
		// cycle; the one after the binds sees the pods on their nodes (6 GPUs held).
		poll.Within(90*time.Second, func() bool {
			err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(page), chromedp.WaitVisible(`select[name=group]`),
				chromedp.SetValue(`select[name=group]`, group), chromedp.Click(`form.filters button[type=submit]`), chromedp.WaitVisible(`.domain-list`))
			if err != nil {
				t.Fatal(err)
			}
			if got, err = chromedp.Run(ctx, chromedp.Evaluate[[]domain](read)); err != nil {
				t.Fatal(err)
			}
			held, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('li.gpu-held').length`))
			return held == 6
		})
		screenshot(t, ctx, "nodes-by-rack-"+w)
		if len(got) != 2 {
			body, _ := chromedp.Run(ctx, chromedp.Text(`main`))
			t.Fatalf("at %s px %d domains, want the two racks:\n%s", w, len(got), body)
		}
		var free []string
		for i, d := range got {
			if d.Free == "2 of 8 GPUs free" {
				landed = rack(i)
			}
			nodes := devcluster.Pool{Name: e.pool.Name}
			wantNodes := []string{nodes.NodeName(2 * i), nodes.NodeName(2*i + 1)}
			if d.Heading != "rack "+rack(i) || d.Context != "in block "+block || !slices.Equal(d.Nodes, wantNodes) {
				t.Errorf("at %s px domain %d is %+v; want rack %s in block %s holding %v", w, i, d, rack(i), block, wantNodes)
			}
			free = append(free, d.Free)
		}
		slices.Sort(free)
		if want := []string{"2 of 8 GPUs free", "8 of 8 GPUs free"}; !slices.Equal(free, want) {
			t.Errorf("at %s px the racks say %q; want %q (the Job's six GPUs in one rack)", w, free, want)
		}
		if selected, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('select[name=group]').value`)); selected != group {
			t.Errorf("at %s px the select shows %q after grouping, want %q", w, selected, group)
		}
		clipped, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('section.domain, .domain-head, li.node, .gpu-grid, li.gpu')]
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

		// The Node pools page shows the pool's topology in its row, and the topology with
		// its levels and its pool.
		if err := chromedp.Do(ctx, chromedp.Navigate(e.a.URL+"/node-pools"), chromedp.WaitVisible(`#topologies-own`)); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "node-pools-topology-"+w)
		shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.querySelector('#pool-`+e.pool.ID.String()+` select[name=networkTopologyId]').selectedOptions[0].textContent,
			document.querySelector('#topology-racks').textContent.replace(/\s+/g, ' ').trim()]`))
		if err != nil {
			t.Fatal(err)
		}
		if want := "racks " + strings.Join(devcluster.TopologyLevels, " → ") + " pools: " + e.pool.Name + " Delete"; len(shown) != 2 || shown[0] != "racks" || shown[1] != want {
			t.Errorf("at %s px the Node pools page shows %q; want the pool's topology racks and %q", w, shown, want)
		}
		if wide, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`)); wide > 0 {
			t.Errorf("at %s px the Node pools page scrolls sideways by %d px", w, wide)
		}
		if wide, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`(t => t.scrollWidth - t.clientWidth)(document.querySelector('#pools-table'))`)); width >= 1280 && wide > 0 {
			t.Errorf("at %s px the node pools table scrolls sideways by %d px", w, wide)
		}
	}

	// The Job's page says the rack it landed in, by the topology the pool has.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(e.a.URL+"/workloads/"+string(job.UID)), chromedp.WaitVisible(`#topology-landing`)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "workload-topology-landing")
	line, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#topology-landing').textContent.replace(/\s+/g, ' ').trim()`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "In rack " + landed + " (" + block + "/" + landed + "), by topology racks. required"; line != want {
		t.Errorf("the Job's page says %q, want %q", line, want)
	}
}
