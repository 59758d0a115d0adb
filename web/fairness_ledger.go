package web

import (
	"cmp"
	"context"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/scheduler/fairness"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// maxLedgerPeriod is the longest period a ledger covers (a year and a day: a leap year).
const maxLedgerPeriod = 366 * 24 * time.Hour

// ledgerSteps are the bucket widths a ledger reads the history in: whole hours and days, so
// that it reads the history's hourly and daily roll-ups, and the coarsest needed to keep a
// period within maxLedgerBuckets — the ledger also reads its pools' figures of every project,
// which must stay within the store's deadline at 1,000 projects. Within a bucket, what a
// project received beyond its entitlement at one moment makes up for a shortfall at another.
var ledgerSteps = []time.Duration{time.Hour, 4 * time.Hour, 24 * time.Hour}

const maxLedgerBuckets = 50

func ledgerStep(period time.Duration) time.Duration {
	for _, s := range ledgerSteps {
		if period/s <= maxLedgerBuckets {
			return s
		}
	}
	return ledgerSteps[len(ledgerSteps)-1]
}

// fairnessLedgerAPI answers GET /api/v1/arbiter/projects/{id}/fairness-ledger?from&to: the
// project's ledger over [from, to) (RFC 3339 times or dates; by default the last 7 days), for
// whoever may read the project (404 otherwise).
func (h *usagePages) fairnessLedgerAPI(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	now := h.now()
	to, err := ledgerTime(c, "to", now)
	if err != nil {
		return err
	}
	from, err := ledgerTime(c, "from", to.Add(-7*24*time.Hour))
	if err != nil {
		return err
	}
	switch {
	case !to.After(from):
		return badField("to", "to (%s) must come after from (%s)", to.Format(time.RFC3339), from.Format(time.RFC3339))
	case to.Sub(from) > maxLedgerPeriod:
		return badField("from", "the period from %s to %s is longer than 366 days; choose a shorter one", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	ctx := c.Request().Context()
	pr, err := h.org.readableProject(c)(ctx, id)
	if err != nil {
		return err
	}
	l, err := h.ledger(ctx, pr, from, to)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, l)
}

// ledgerTime is a query parameter read as an RFC 3339 time or a date (00:00 UTC); def when absent.
func ledgerTime(c echo.Context, name string, def time.Time) (time.Time, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		return def.UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339, raw); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, raw); err == nil {
		return t, nil
	}
	return time.Time{}, badField(name, "%s %q is not a time; write it as 2026-11-02T15:04:05Z or as a date, 2026-11-02", name, clipText(raw))
}

// ledger is the project's fairness ledger over [from, to): the project's usage history, its
// pools' (every project's allocation, for what the pool was full of) and its workloads' waits,
// through fairness.Compute.
//
// The period is taken to whole hours (from down, to up; the history's roll-ups are by the
// hour and the raw samples are kept only 48 hours), and to whole days from 50 hours on.
func (h *usagePages) ledger(ctx context.Context, pr store.Project, from, to time.Time) (views.FairnessLedger, error) {
	from, to = from.UTC().Truncate(time.Hour), to.UTC().Add(time.Hour-time.Nanosecond).Truncate(time.Hour)
	step := ledgerStep(to.Sub(from))
	from = from.Truncate(step)
	own, _, err := h.history.UsageSeries(ctx, store.UsageQuery{From: from, To: to, Step: step, ProjectIDs: []uuid.UUID{pr.ID}})
	if err != nil {
		return views.FairnessLedger{}, err
	}
	in := fairness.Input{From: from, To: to}
	pools := map[string]bool{}
	for _, u := range own {
		pools[u.NodePool] = true
		in.Samples = append(in.Samples, fairness.Sample{At: u.At, Span: time.Duration(u.RecordedSeconds * float64(time.Second)), Width: step,
			NodePool: u.NodePool, NonPreemptible: u.NonPreemptible, Preemptible: u.Preemptible, Borrowed: u.Borrowed,
			Pending: u.Pending, Deserved: u.Deserved, FairShare: u.FairShare})
	}
	more := false
	if fairness.Compute(in).Total.Shortfall > 0 { // the causes of a shortfall, when there is one
		everyone, capacity, err := h.history.UsageSeries(ctx, store.UsageQuery{From: from, To: to, Step: step, NodePools: slices.Sorted(maps.Keys(pools))})
		if err != nil {
			return views.FairnessLedger{}, err
		}
		in.Pools = poolTotals(everyone, capacity)
		ws, left, err := h.history.LedgerWorkloads(ctx, pr.ID, from, to)
		if err != nil {
			return views.FairnessLedger{}, err
		}
		more = left
		for _, w := range ws {
			fw := fairness.Workload{Name: w.Name, QueuedAt: w.QueuedAt, GPUs: float64(w.GPUs), Gang: w.Gang, Reason: w.Reason}
			if w.FinishedAt != nil {
				fw.FinishedAt = *w.FinishedAt
			}
			for _, e := range w.Events {
				fw.Events = append(fw.Events, fairness.Event{At: e.At, Kind: e.Kind, By: e.PreemptorProject})
			}
			in.Workloads = append(in.Workloads, fw)
		}
	}
	return ledgerView(pr, fairness.Compute(in), more), nil
}

// poolTotals are each pool's capacity, allocation and non-preemptible allocation per bucket.
func poolTotals(points []store.UsagePoint, capacity []store.PoolCapacityPoint) []fairness.Pool {
	type key struct {
		pool string
		at   int64
	}
	totals := map[key]*fairness.Pool{}
	get := func(pool string, at time.Time) *fairness.Pool {
		k := key{pool, at.UnixNano()}
		if totals[k] == nil {
			totals[k] = &fairness.Pool{At: at, NodePool: pool}
		}
		return totals[k]
	}
	for _, c := range capacity {
		get(c.NodePool, c.At).CapacityGPUs = c.GPUs
	}
	for _, u := range points {
		p := get(u.NodePool, u.At)
		p.AllocatedGPUs += u.NonPreemptible + u.Preemptible + u.Borrowed
		p.NonPreemptibleGPUs += u.NonPreemptible
	}
	out := make([]fairness.Pool, 0, len(totals))
	for _, p := range totals {
		out = append(out, *p)
	}
	return out
}

// ledgerView is the ledger as the page and the API show it, GPU-hours to two decimals.
func ledgerView(pr store.Project, l fairness.Ledger, more bool) views.FairnessLedger {
	v := views.FairnessLedger{ProjectID: pr.ID.String(), ProjectName: pr.Name, From: l.From.UTC(), To: l.To.UTC(),
		Total: ledgerFigures(l.Total), Pools: []views.FairnessLedgerPool{}, WorkloadsLeftOut: more}
	for _, p := range l.Pools {
		vp := views.FairnessLedgerPool{NodePool: p.NodePool, LedgerFigures: ledgerFigures(p.Figures), Shortfalls: []views.LedgerShortfall{}}
		for _, s := range p.Shortfalls {
			vp.Shortfalls = append(vp.Shortfalls, views.LedgerShortfall{Cause: string(s.Cause), By: s.By, GPUHours: hundredths(s.GPUHours), Words: s.Words()})
		}
		v.Pools = append(v.Pools, vp)
	}
	v.Summary = ledgerSummary(pr.Name, l, more)
	return v
}

func ledgerFigures(f fairness.Figures) views.LedgerFigures {
	return views.LedgerFigures{Deserved: hundredths(f.Deserved), FairShare: hundredths(f.FairShare), Entitled: hundredths(f.Entitled),
		Received: hundredths(f.Received), NonPreemptible: hundredths(f.NonPreemptible), Borrowed: hundredths(f.Borrowed),
		Shortfall: hundredths(f.Shortfall), NoDemand: hundredths(f.NoDemand), RecordedHours: hundredths(f.RecordedHours)}
}

func hundredths(v float64) float64 { return math.Round(v*100) / 100 }

// ledgerSummary says the ledger in words: entitled and received, the shortfall's causes
// over every pool (the largest first), and fair share not asked for.
func ledgerSummary(project string, l fairness.Ledger, more bool) string {
	if l.Total.RecordedHours == 0 {
		return "No usage of " + project + " was recorded in this period."
	}
	t := l.Total
	var b strings.Builder
	b.WriteString(project + " was entitled to " + views.GPUHours(t.Entitled) + " GPU-hours (its fair share, capped by what it asked for) and received " +
		views.GPUHours(t.Received) + ".")
	// a tenth of a GPU-hour is what the tables show: less is no shortfall to speak of
	if t.Shortfall < 0.05 {
		b.WriteString(" It received all it was entitled to.")
	} else {
		causes := map[fairness.Shortfall]float64{}
		for _, p := range l.Pools {
			for _, s := range p.Shortfalls {
				causes[fairness.Shortfall{Cause: s.Cause, By: s.By}] += s.GPUHours
			}
		}
		list := slices.Collect(maps.Keys(causes))
		slices.SortFunc(list, func(a, b fairness.Shortfall) int {
			return cmp.Or(cmp.Compare(causes[b], causes[a]), cmp.Compare(a.Cause, b.Cause), cmp.Compare(a.By, b.By))
		})
		parts := make([]string, 0, len(list))
		for _, s := range list {
			parts = append(parts, views.GPUHours(causes[s])+" "+s.Words())
		}
		b.WriteString(" It fell short by " + views.GPUHours(t.Shortfall) + " GPU-hours: " + strings.Join(parts, "; ") + ".")
	}
	if t.NoDemand >= 0.05 {
		b.WriteString(" It did not ask for " + views.GPUHours(t.NoDemand) + " GPU-hours of its fair share (no demand).")
	}
	if more {
		b.WriteString(" It had more workloads in this period than the ledger reads; the causes are shared among the most recent.")
	}
	return b.String()
}
