package scheduler

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"
)

var writeS28Plot = flag.Bool("s28-plot", false, "write docs/s28-example.svg from TestS28_KAIExample's figures")

// kaiExample is KAI's published example of time-aware fairness, run through the core and the
// UsageDecay account cycle after cycle on simulated time: one pool of 16 GPUs (one node), two
// projects with nothing deserved and equal weight, each always with a 16-GPU job waiting; a job
// runs for jobLength. It returns, minute by minute, the GPUs each project holds, and which
// project started each job, in order.
type kaiExample struct {
	window, halfLife, jobLength, length time.Duration
	kValue                              float64
	s28                                 bool
}

type allocation struct{ a, b int64 }

func (e kaiExample) run(t *testing.T) (minutes []allocation, starts []string) {
	t.Helper()
	pools := []NodePool{{Name: "default", TimeBasedFairness: TimeBasedFairness{Enabled: e.s28, Window: e.window, HalfLife: e.halfLife, KValue: e.kValue}}}
	account := NewUsageDecay(pools)
	type job struct {
		w       *wlB
		running bool
		started time.Time
	}
	var jobs []*job
	submitted := map[string]int{}
	submit := func(project string, at time.Time) {
		submitted[project]++
		w := wl(project + "-" + strconv.Itoa(submitted[project])).in(project).gpus(16)
		w.w.QueuedAt = at
		jobs = append(jobs, &job{w: w})
	}
	submit("a", t0)
	submit("b", t0)
	for now := t0; now.Before(t0.Add(e.length)); now = now.Add(time.Minute) {
		kept := jobs[:0]
		for _, j := range jobs {
			if !j.running || now.Sub(j.started) < e.jobLength {
				kept = append(kept, j)
			}
		}
		jobs = kept
		b := snap().node(node("n1").gpus(16)).project(project("a", 0).weight(1), project("b", 0).weight(1))
		b.s.Now, b.s.NodePools = now, pools
		byUID := map[string]*job{}
		for _, j := range jobs {
			b.wl(j.w)
			byUID[j.w.w.UID] = j
		}
		s := b.build()
		s.HistoricalUsage = account.Value(now, pools)
		plan := s.Plan()
		if len(plan.Evictions) > 0 {
			t.Fatalf("%s: nothing is deserved, so nothing should be evicted: %+v", now.Sub(t0), plan.Evictions)
		}
		for _, bd := range plan.Binds {
			j := byUID[bd.Workload]
			j.running, j.started = true, now
			j.w.on(0, bd.Node)
			j.w.w.StartedAt = now
			starts = append(starts, j.w.w.Project)
			submit(j.w.w.Project, now) // the stream goes on
		}
		account.Observe(now, &plan, pools)
		var held allocation
		for _, q := range plan.Projects {
			switch q.Name {
			case "a":
				held.a += q.Allocated
			case "b":
				held.b += q.Allocated
			}
		}
		minutes = append(minutes, held)
	}
	return minutes, starts
}

// gpuHours sums the allocations of minutes [from, to).
func gpuHours(ms []allocation, from, to int) (a, b float64) {
	for _, m := range ms[from:to] {
		a += float64(m.a) / 60
		b += float64(m.b) / 60
	}
	return a, b
}

func TestS28_KAIExample(t *testing.T) {
	example := kaiExample{window: 8 * time.Hour, halfLife: 2 * time.Hour, jobLength: time.Hour, length: 24 * time.Hour, kValue: 1}
	without := example
	without.s28 = false
	with := example
	with.s28 = true
	off, offStarts := without.run(t)
	on, onStarts := with.run(t)
	lastWindow := len(on) - int(example.window/time.Minute)

	offA, offB := gpuHours(off, lastWindow, len(off))
	onA, onB := gpuHours(on, lastWindow, len(on))
	t.Logf("over the last %s: without S28 a %.0f and b %.0f GPU-hours; with S28 a %.0f and b %.0f", example.window, offA, offB, onA, onB)
	dayOffA, dayOffB := gpuHours(off, 0, len(off))
	dayOnA, dayOnB := gpuHours(on, 0, len(on))
	t.Logf("over the day: without S28 a %.0f and b %.0f GPU-hours; with S28 a %.0f and b %.0f", dayOffA, dayOffB, dayOnA, dayOnB)

	// Without S28 the first by name gets the freed GPUs again and again.
	if offB != 0 || dayOffB != 0 {
		t.Errorf("without S28, b received %.0f GPU-hours over the last window (%.0f over the day); a should keep the pool", offB, dayOffB)
	}
	// With S28 the GPUs go to the less-used project: each receives half within ±10 %.
	for _, half := range []struct {
		what       string
		a, b, full float64
	}{{"the last window", onA, onB, 16 * example.window.Hours()}, {"the day", dayOnA, dayOnB, 16 * example.length.Hours()}} {
		if math.Abs(half.a+half.b-half.full) > 1e-6 {
			t.Errorf("with S28 over %s the pool was not kept full: %.0f of %.0f GPU-hours", half.what, half.a+half.b, half.full)
		}
		if share := half.a / (half.a + half.b); share < 0.45 || share > 0.55 {
			t.Errorf("with S28 over %s a received %.0f %% of the GPU-hours, b %.0f %%; each should receive half within ±10 %%", half.what, 100*share, 100*(1-share))
		}
	}
	// When a job ends, the next start goes to the project that did not run the last one.
	for i := 1; i < len(onStarts); i++ {
		if onStarts[i] == onStarts[i-1] {
			t.Errorf("with S28, job %d went to %s right after its own job; starts: %v", i+1, onStarts[i], onStarts)
			break
		}
	}
	t.Logf("starts without S28: %v; with S28: %v", offStarts, onStarts)

	svg := s28Plot(off, on)
	const path = "../docs/s28-example.svg"
	if *writeS28Plot {
		if err := os.WriteFile(path, svg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(path)
	if err != nil || string(committed) != string(svg) {
		t.Errorf("docs/s28-example.svg is not this example's plot; write it again: go test -run TestS28_KAIExample ./scheduler -s28-plot")
	}
}

// s28Plot draws the GPUs each project holds hour by hour, without S28 above and with it below.
func s28Plot(off, on []allocation) []byte {
	const w, panel, left, top, gap = 720.0, 120.0, 60.0, 30.0, 60.0
	hours := len(on) / 60
	x := func(m int) float64 { return left + float64(m)*(w-left-20)/float64(len(on)) }
	out := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n",
		w, top+2*panel+gap+50, w, top+2*panel+gap+50)
	out += `<rect width="100%" height="100%" fill="white"/>` + "\n"
	for i, series := range [][]allocation{off, on} {
		y0 := top + float64(i)*(panel+gap)
		title := "Without S28: project a keeps the pool"
		if i == 1 {
			title = "With S28 (window 8 h, half-life 2 h, kValue 1): the less-used project gets the freed GPUs"
		}
		out += fmt.Sprintf(`<text x="%.0f" y="%.0f">%s</text>`+"\n", left, y0-8, title)
		out += fmt.Sprintf(`<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/>`+"\n", left, y0+panel, x(len(series)), y0+panel)
		out += fmt.Sprintf(`<text x="%.0f" y="%.0f" text-anchor="end">16 GPUs</text>`+"\n", left-4, y0+12)
		out += fmt.Sprintf(`<text x="%.0f" y="%.0f" text-anchor="end">0</text>`+"\n", left-4, y0+panel)
		for m := 0; m < len(series); {
			n := m
			for n < len(series) && series[n] == series[m] {
				n++
			}
			for _, bar := range []struct {
				gpus  int64
				color string
			}{{series[m].a, "#4e79a7"}, {series[m].b, "#f28e2b"}} {
				if bar.gpus > 0 {
					h := panel * float64(bar.gpus) / 16
					out += fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x(m), y0+panel-h, x(n)-x(m), h, bar.color)
				}
			}
			m = n
		}
		for hr := 0; hr <= hours; hr += 4 {
			out += fmt.Sprintf(`<text x="%.1f" y="%.0f" text-anchor="middle">%d h</text>`+"\n", x(hr*60), y0+panel+16, hr)
		}
	}
	ly := top + 2*panel + gap + 30
	out += fmt.Sprintf(`<rect x="%.0f" y="%.0f" width="12" height="12" fill="#4e79a7"/><text x="%.0f" y="%.0f">project a</text>`+"\n", left, ly-10, left+18, ly)
	out += fmt.Sprintf(`<rect x="%.0f" y="%.0f" width="12" height="12" fill="#f28e2b"/><text x="%.0f" y="%.0f">project b</text>`+"\n", left+110, ly-10, left+128, ly)
	out += fmt.Sprintf(`<text x="%.0f" y="%.0f">16-GPU jobs of 1 h, one pool of 16 GPUs, nothing deserved, equal weights</text>`+"\n", left+220, ly)
	return []byte(out + "</svg>\n")
}
