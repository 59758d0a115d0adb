package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arbiterhq/arbiter/internal/testkit/usageseed"
	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
)

// drawnChart is what the browser shows of one chart: the series uPlot holds (by label, as
// drawn: stacked series as running sums) and its table (header and rows as text).
type drawnChart struct {
	Width int                   `json:"width"`
	At    []int64               `json:"at"`
	Drawn map[string][]*float64 `json:"drawn"`
	Head  []string              `json:"head"`
	Rows  [][]string            `json:"rows"`
}

// readDrawnChart reads chart id from the page: uPlot's data and the table under it.
func readDrawnChart(t *testing.T, ctx context.Context, id string) drawnChart {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[drawnChart](`(() => {
		const c = window.arbiterCharts[`+jsString(id)+`];
		const u = c.plot, fig = document.getElementById(`+jsString(id)+`);
		const drawn = {};
		u.series.forEach((s, i) => { if (i > 0) drawn[s.label] = u.data[i]; });
		return {
			width: fig.querySelector('canvas').getBoundingClientRect().width,
			at: u.data[0], drawn,
			head: [...fig.querySelectorAll('table.chart-data thead th')].map(th => th.textContent),
			rows: [...fig.querySelectorAll('table.chart-data tbody tr')].map(tr => [...tr.children].map(td => td.textContent)),
		};
	})()`))
	if err != nil {
		t.Fatalf("read chart %s: %v", id, err)
	}
	return got
}

// cell is a value as the table writes it.
func cell(v *float64) string {
	if v == nil {
		return "—"
	}
	return strconv.FormatFloat(math.Round(*v*100)/100, 'f', -1, 64)
}

// checkChart compares what the browser drew and tabled of one chart with its JSON: the
// table has a row per bucket with the JSON's figures; uPlot holds the lines as they are and
// the stack as running sums, whose top is the sum of the stacked series.
func checkChart(t *testing.T, where string, want views.UsageChart, got drawnChart) {
	t.Helper()
	if got.Width < 300 {
		t.Errorf("%s: chart %s is drawn %d px wide", where, want.ID, got.Width)
	}
	if diff := cmp.Diff(want.At, got.At); diff != "" {
		t.Errorf("%s: chart %s's times (-JSON +drawn):\n%s", where, want.ID, diff)
	}
	head := []string{"Time (UTC)"}
	var rows [][]string
	for i, at := range want.At {
		rows = append(rows, []string{time.Unix(at, 0).UTC().Format("2006-01-02 15:04")})
		for _, s := range want.Series {
			rows[i] = append(rows[i], cell(s.Values[i]))
		}
	}
	for _, s := range want.Series {
		head = append(head, s.Label)
	}
	if diff := cmp.Diff(head, got.Head); diff != "" {
		t.Errorf("%s: chart %s's table header (-JSON +table):\n%s", where, want.ID, diff)
	}
	if diff := cmp.Diff(rows, got.Rows); diff != "" {
		t.Errorf("%s: chart %s's table (-JSON +table):\n%s", where, want.ID, diff)
	}
	top := make([]*float64, len(want.At))
	var topLabel string
	for _, s := range want.Series {
		if s.Kind != "stack" {
			if diff := cmp.Diff(s.Values, got.Drawn[s.Label]); diff != "" {
				t.Errorf("%s: chart %s draws %s (-JSON +drawn):\n%s", where, want.ID, s.Label, diff)
			}
			continue
		}
		topLabel = s.Label // the last stacked series is drawn as the sum of all
		for i, v := range s.Values {
			if v != nil {
				sum := *v
				if top[i] != nil {
					sum += *top[i]
				}
				top[i] = &sum
			}
		}
	}
	if topLabel != "" {
		drawnTop := got.Drawn[topLabel]
		for i := range top {
			if (top[i] == nil) != (drawnTop[i] == nil) || top[i] != nil && math.Abs(*top[i]-*drawnTop[i]) > 1e-6 {
				t.Errorf("%s: chart %s's stack at %s is drawn %s high, the JSON's series add up to %s", where, want.ID,
					time.Unix(want.At[i], 0).UTC().Format(time.RFC3339), cell(drawnTop[i]), cell(top[i]))
				break
			}
		}
	}
}

// TestBrowserUsageChartsShowTheirDataAndItsTable: with 30 days of usage of 1,000 projects in
// 10 departments recorded (no cluster; hourly rows before the last 48 hours, as the leader
// leaves them), the Overview's chart of the node pool (stacked by the top projects and the
// others) and a project's charts draw the figures of their JSON, and each chart's table holds
// the same figures, at 1280 and at 800 px, with nothing wider than the window; so do a
// department's charts (its 100 projects summed) over 7 days. A project's
// page says its fairness ledger. The time each page's charts took to come and to draw is
// logged (a figure, not an assertion).
func TestBrowserUsageChartsShowTheirDataAndItsTable(t *testing.T) {
	t.Parallel()
	dbURL := freshDatabase(t)
	a := startArbiter(t, server.Config{DatabaseURL: dbURL})
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool)
	ctx := context.Background()
	projects, err := usageseed.Organization(ctx, st, 10, 1000)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	samples, err := usageseed.Record(ctx, st, usageseed.Spec{End: time.Now(), Days: 30, RawHours: 48, RawInterval: 5 * time.Minute,
		NodePool: "default", Capacity: 2048, Projects: projects})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d samples of 1,000 projects in %s", samples, time.Since(start).Round(time.Second))
	// And a node pool with no nodes (Run:ai's default pool when every node is in another):
	// the Overview names it instead of drawing an empty chart.
	// (In the hour not yet rolled up, which is read raw.)
	spare := store.UsageSample{At: time.Now().Truncate(5 * time.Minute), Interval: 5 * time.Minute,
		Pools: []store.PoolUsage{{NodePool: "spare", CapacityGPUs: 0}}}
	if ok, err := st.RecordUsageSample(ctx, spare); err != nil || !ok {
		t.Fatal(ok, err)
	}
	charts := func(path string) views.UsageCharts {
		t.Helper()
		req, _ := http.NewRequest("GET", a.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+a.adminToken(t))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var c views.UsageCharts
		if err := json.NewDecoder(res.Body).Decode(&c); err != nil || res.StatusCode != 200 {
			t.Fatalf("GET %s = %d: %v", path, res.StatusCode, err)
		}
		return c
	}
	project, department := projects[0].ID.String(), projects[0].DepartmentID.String()
	pages := []struct {
		name, path, json string
	}{
		{"overview", "/?range=30d&by=project", "/console/usage/pools?range=30d&by=project"},
		{"project", "/projects/" + project + "?range=30d", "/console/usage/projects/" + project + "?range=30d"},
		{"department", "/departments/" + department + "?range=7d", "/console/usage/departments/" + department + "?range=7d"},
	}

	browser := newBrowser(t)
	loginAsAdmin(t, browser, a)
	for _, width := range []int64{1280, 800} {
		w := fmt.Sprint(width)
		for _, p := range pages {
			where := p.name + " at " + w + " px"
			err := chromedp.Do(browser, chromedp.EmulateViewport(width, 900), chromedp.Navigate(a.URL+p.path),
				chromedp.Poll[chromedp.Void](`document.querySelector('[data-usage-src]').dataset.ready !== undefined`,
					chromedp.WithPollingTimeout(time.Minute)))
			if err != nil {
				t.Fatalf("%s: the charts did not load: %v", where, err)
			}
			state, _ := chromedp.Run(browser, chromedp.Evaluate[map[string]string](`({...document.querySelector('[data-usage-src]').dataset})`))
			if state["ready"] != "true" {
				status, _ := chromedp.Run(browser, chromedp.Text(`.usage-status`))
				t.Fatalf("%s: the charts say %q", where, status)
			}
			t.Logf("%s: the charts' JSON came in %s ms and they were drawn in %s ms", where, state["fetchMs"], state["renderMs"])
			want := charts(p.json)
			if len(want.Charts) == 0 {
				t.Fatalf("%s: the JSON has no chart", where)
			}
			for _, c := range want.Charts {
				checkChart(t, where, c, readDrawnChart(t, browser, c.ID))
			}
			overflowing(t, browser, w, `.usage-charts, .chart-plot, .ledger`)
			if err := chromedp.Do(browser, chromedp.Evaluate[chromedp.Void](`document.querySelector('.chart-table').open = true`)); err != nil {
				t.Fatal(err)
			}
			screenshot(t, browser, "usage-"+p.name+"-"+w)
			elementScreenshot(t, browser, "#usage-charts", "usage-"+p.name+"-charts-"+w)
			switch p.name {
			case "overview":
				if status, err := chromedp.Run(browser, chromedp.Text(`.usage-status`)); err != nil || status != "Node pool spare has had no GPUs and held no work in this period." {
					t.Errorf("%s: the charts' status reads %q (%v), want the empty pool named", where, status, err)
				}
				chartSurvivesRefresh(t, browser, where, want.Charts[0].ID)
			case "project":
				summary, err := chromedp.Run(browser, chromedp.Text(`.ledger-summary`))
				if err != nil || len(summary) < 40 {
					t.Errorf("%s: the page says no fairness ledger: %q (%v)", where, summary, err)
				}
			}
		}
	}
	if want := charts(pages[0].json); len(want.Charts[0].Series) != 10 || want.Charts[0].Series[8].Label != "others" {
		t.Errorf("the Overview's chart stacks %d series, want the top 8 projects, the others and the capacity", len(want.Charts[0].Series))
	}
}

// chartSurvivesRefresh waits for the Overview's live region to refresh itself (every 5 s) and
// checks that the chart drawn before is still on the page: the region is swapped whole, and
// the charts' section is kept as it is.
func chartSurvivesRefresh(t *testing.T, ctx context.Context, where, id string) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`window.liveSwaps = 0; document.body.addEventListener('htmx:afterSwap', () => window.liveSwaps++)`),
		chromedp.Poll[chromedp.Void](`window.liveSwaps > 0`, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("%s: the live region did not refresh: %v", where, err)
	}
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.contains(window.arbiterCharts[`+jsString(id)+`].plot.root)`))
	if err != nil || !kept {
		t.Errorf("%s: after the live region refreshed, chart %s is no longer on the page (%v)", where, id, err)
	}
}

// elementScreenshot saves one element of the page as an artifact (evidence, not an assertion).
func elementScreenshot(t *testing.T, ctx context.Context, sel, name string) {
	t.Helper()
	attemptCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(attemptCtx, chromedp.Screenshot(sel))
	if err != nil {
		t.Logf("screenshot %s not taken: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(artifactDir(t), name+".png"), png, 0o644); err != nil {
		t.Error(err)
	}
}
