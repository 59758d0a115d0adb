package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
)

// TestS28_TwoProjectsAlternateUnderTimeBasedFairShare is KAI's example of time-aware fairness
// on the local control plane: one node of 16 GPUs, projects aaa and zzz with nothing deserved
// and equal weights, each with four 16-GPU Jobs of 20 s queued. An admin turns S28 on in the
// pool (window 3 min, half-life 1 min, kValue 1) through the API. Each time a Job ends, the
// project that used the pool less starts next, so the two alternate and each receives half the
// GPU-seconds; without S28 aaa, first by name, would start all four of its Jobs first
// (TestS28_KAIExample, TestS28_TwoProjectsTakeTurnsThroughTheLoop). The Node pools page then
// says how the pool weighs past use.
func TestS28_TwoProjectsAlternateUnderTimeBasedFairShare(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 16)
	aaa := e.project("aaa", 0, store.PolicyUpdate{})
	zzz := e.project("zzz", 0, store.PolicyUpdate{})
	status, body := e.a.do(t, "PUT", "/api/v1/arbiter/node-pools/"+e.pool.ID.String()+"/time-based-fairness",
		`{"enabled":true,"windowSeconds":180,"halfLifeSeconds":60,"kValue":1}`)
	if status != 200 || body["enabled"] != true {
		t.Fatalf("turning S28 on = %d %v", status, body)
	}

	type started struct {
		project, job string
		at           time.Time
	}
	jobs := map[string][]string{}
	for i := 1; i <= 4; i++ {
		for _, ns := range []string{aaa, zzz} {
			name := fmt.Sprintf("train-%d", i)
			e.job(jobSpec{name: name, namespace: ns, gpus: 16, runSeconds: "20", labels: labels("low", "preemptible")})
			jobs[ns] = append(jobs[ns], name)
		}
	}
	var starts []started
	e.eventually("six of the eight Jobs have started, one after another", 5*time.Minute, func() bool {
		starts = starts[:0]
		for ns, names := range jobs {
			for _, name := range names {
				if at := e.startedAt(ns, name); !at.IsZero() {
					starts = append(starts, started{ns, name, at})
				}
			}
		}
		return len(starts) >= 6
	})
	slices.SortFunc(starts, func(a, b started) int { return a.at.Compare(b.at) })
	var order []string
	count := map[string]int{}
	for _, s := range starts[:6] {
		order = append(order, strings.TrimSuffix(s.project, "-"+e.id)+"/"+s.job)
		count[s.project]++
	}
	t.Logf("starts in order: %v", order)
	for i := 1; i < 6; i++ {
		if starts[i].project == starts[i-1].project {
			t.Errorf("start %d went to %s right after its own Job; the project that used the pool less should go: %v", i+1, starts[i].project, order)
			break
		}
	}
	// equal Jobs: half the starts are half the GPU-seconds
	if count[aaa] != 3 || count[zzz] != 3 {
		t.Errorf("of the first six starts aaa had %d and zzz %d; each should have half", count[aaa], count[zzz])
	}

	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, e.a)
	want := "time-based fair share: window 3 min, half-life 1 min, kValue 1"
	var badge string
	poll.Within(30*time.Second, func() bool {
		if err := chromedp.Do(ctx, chromedp.Navigate(e.a.URL+"/node-pools"), chromedp.WaitVisible(`#pools-table`)); err != nil {
			t.Fatal(err)
		}
		var err error
		badge, err = chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('#pool-`+e.pool.ID.String()+` .badge.time-fairness') || {}).textContent || ''`))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(badge) == want
	})
	screenshot(t, ctx, "node-pools-time-fairness")
	if strings.TrimSpace(badge) != want {
		t.Errorf("the Node pools page says %q for the pool; want %q", badge, want)
	}
}
