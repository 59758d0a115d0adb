package web

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// usageStep is each range's bucket width on a project's and a department's charts: at most
// 180 buckets a chart, whatever the range, so that a chart's JSON stays small (about 9 KB)
// and draws at once. Whole hours, so that the history is read from its hourly roll-ups and
// raw samples only for the hour not yet rolled up: the store reads raw samples of every
// project to answer one (at 1,000 projects recorded every 30 s, 24 hours of 10-minute buckets
// ran past the store's 5 s deadline).
var usageStep = map[string]time.Duration{"24h": time.Hour, "7d": time.Hour, "30d": 4 * time.Hour}

// poolUsageStep is each range's bucket width on the Overview's charts, which read the
// departments' and pools' totals (or, for a caller who may read only some projects, each of
// their projects): whole hours and days, so that the history is read from its hourly and
// daily roll-ups and raw samples, every project's, only for the hour not yet rolled up; 24
// hours of 10-minute buckets would read every project's raw samples (docs/console.md "Charts").
var poolUsageStep = map[string]time.Duration{"24h": time.Hour, "7d": 4 * time.Hour, "30d": 24 * time.Hour}

var usageLength = map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour}

// topProjects is how many projects the Overview's chart stacks by name; the rest are "others".
const topProjects = 8

// usagePeriod is the range's period ending with the bucket that holds now. Buckets start at
// multiples of the step from the Unix epoch (each step divides a day), so the same bucket
// has the same start on every load.
type usagePeriod struct {
	Range    string
	From, To time.Time
	Step     time.Duration
}

func newUsagePeriod(r string, step time.Duration, now time.Time) usagePeriod {
	to := now.UTC().Truncate(step).Add(step)
	return usagePeriod{Range: r, From: to.Add(-usageLength[r]), To: to, Step: step}
}

// buckets are the bucket starts of the period, in Unix seconds.
func (p usagePeriod) buckets() []int64 {
	n := int(p.To.Sub(p.From) / p.Step)
	at := make([]int64, n)
	for i := range at {
		at[i] = p.From.Add(time.Duration(i) * p.Step).Unix()
	}
	return at
}

func (p usagePeriod) index(t time.Time) int {
	i := int(t.Sub(p.From) / p.Step)
	if t.Before(p.From) || i >= int(p.To.Sub(p.From)/p.Step) {
		return -1
	}
	return i
}

func (p usagePeriod) chart(id, title string) views.UsageChart {
	return views.UsageChart{ID: id, Title: title, Range: p.Range, From: p.From, To: p.To,
		StepSeconds: int(p.Step / time.Second), At: p.buckets()}
}

// column is a series' values over the period's buckets: nil for a bucket the history did not
// record.
type column []*float64

func (p usagePeriod) column() column { return make(column, len(p.buckets())) }

// recorded sets zero in the buckets the history recorded (what a project absent from them
// held), so that only unrecorded buckets stay gaps.
func (c column) recorded(at []bool) column {
	for i, ok := range at {
		if ok && c[i] == nil {
			c[i] = new(float64)
		}
	}
	return c
}

func (c column) add(i int, v float64) {
	if i < 0 {
		return
	}
	if c[i] == nil {
		c[i] = new(float64)
	}
	*c[i] += v
}

// anyAbove0 says whether some bucket holds more than nothing.
func (c column) anyAbove0() bool {
	return slices.ContainsFunc(c, func(v *float64) bool { return v != nil && *v > 0 })
}

// rounded keeps two decimals: GPUs averaged over a bucket need no more, and the JSON stays small.
func (c column) rounded() []*float64 {
	for _, v := range c {
		if v != nil {
			*v = math.Round(*v*100) / 100
		}
	}
	return c
}

// recordedBuckets says which buckets hold recorded time (of any pool).
func (p usagePeriod) recordedBuckets(capacity []store.PoolCapacityPoint) []bool {
	at := make([]bool, len(p.buckets()))
	for _, c := range capacity {
		if i := p.index(c.At); i >= 0 && c.RecordedSeconds > 0 {
			at[i] = true
		}
	}
	return at
}

// ownUsageCharts are a project's or a department's charts (summed over its projects and node
// pools): allocation split non-preemptible / preemptible / borrowed, against deserved, fair
// share and pending demand; and its preemptions and reclaims per bucket.
func ownUsageCharts(p usagePeriod, points []store.UsagePoint, capacity []store.PoolCapacityPoint) views.UsageCharts {
	recorded := p.recordedBuckets(capacity)
	cols := map[string]column{}
	for _, k := range []string{"nonPreemptible", "preemptible", "borrowed", "deserved", "fairShare", "pending", "preemptions", "reclaims"} {
		cols[k] = p.column().recorded(recorded)
	}
	for _, u := range points {
		i := p.index(u.At)
		cols["nonPreemptible"].add(i, u.NonPreemptible)
		cols["preemptible"].add(i, u.Preemptible)
		cols["borrowed"].add(i, u.Borrowed)
		cols["deserved"].add(i, u.Deserved)
		cols["fairShare"].add(i, u.FairShare)
		cols["pending"].add(i, u.Pending)
		cols["preemptions"].add(i, float64(u.Preemptions))
		cols["reclaims"].add(i, float64(u.Reclaims))
	}
	alloc := p.chart("usage-allocation", "GPUs allocated against deserved quota and fair share")
	for _, s := range []struct{ key, label, kind string }{
		{"nonPreemptible", "Non-preemptible", "stack"},
		{"preemptible", "Preemptible (in quota)", "stack"},
		{"borrowed", "Borrowed (over quota)", "stack"},
		{"deserved", "Deserved quota", "line"},
		{"fairShare", "Fair share", "line"},
		{"pending", "Pending demand", "line"},
	} {
		alloc.Series = append(alloc.Series, views.UsageSeries{Key: s.key, Label: s.label, Kind: s.kind, Values: cols[s.key].rounded()})
	}
	events := p.chart("usage-events", "Preemptions and reclaims")
	events.Series = []views.UsageSeries{
		{Key: "preemptions", Label: "Preempted (S16)", Kind: "count", Values: cols["preemptions"].rounded()},
		{Key: "reclaims", Label: "Reclaimed (S17)", Kind: "count", Values: cols["reclaims"].rounded()},
	}
	return views.UsageCharts{Range: p.Range, Charts: []views.UsageChart{alloc, events}}
}

// poolUsageCharts are the Overview's charts: per node pool, the allocation of the projects
// the caller may read, stacked by department (by is "department") or by the projects that
// held the most GPU-hours in that pool and the others together ("project"), under the pool's
// capacity. Given others for a pool, points hold only its top projects and others is the rest.
func poolUsageCharts(p usagePeriod, by string, points []store.UsagePoint, capacity []store.PoolCapacityPoint,
	others map[string]column, projectName, departmentName map[uuid.UUID]string) views.UsageCharts {
	type stack struct {
		label string
		col   column
		total float64
	}
	perPool := map[string]map[uuid.UUID]*stack{}
	capCols := map[string]column{}
	recordedIn := map[string][]bool{}
	for _, c := range capacity {
		if capCols[c.NodePool] == nil {
			capCols[c.NodePool] = p.column()
			recordedIn[c.NodePool] = make([]bool, len(capCols[c.NodePool]))
		}
		if i := p.index(c.At); i >= 0 && c.RecordedSeconds > 0 {
			capCols[c.NodePool].add(i, c.GPUs)
			recordedIn[c.NodePool][i] = true
		}
	}
	for _, u := range points {
		key, label := u.DepartmentID, departmentName[u.DepartmentID]
		if by == "project" {
			key, label = u.ProjectID, projectName[u.ProjectID]
		}
		if label == "" {
			label = "(deleted) " + key.String()[:8]
		}
		if perPool[u.NodePool] == nil {
			perPool[u.NodePool] = map[uuid.UUID]*stack{}
		}
		s := perPool[u.NodePool][key]
		if s == nil {
			s = &stack{label: label, col: p.column()}
			perPool[u.NodePool][key] = s
		}
		v := u.NonPreemptible + u.Preemptible + u.Borrowed
		s.col.add(p.index(u.At), v)
		s.total += v
	}
	out := views.UsageCharts{Range: p.Range, By: by}
	for _, pool := range slices.Sorted(maps.Keys(capCols)) {
		stacks := slices.Collect(maps.Values(perPool[pool]))
		if !capCols[pool].anyAbove0() && !slices.ContainsFunc(stacks, func(s *stack) bool { return s.total > 0 }) {
			out.EmptyPools = append(out.EmptyPools, pool)
			continue
		}
		// the most GPU-hours at the bottom of the stack, then by name: a stable order
		slices.SortFunc(stacks, func(a, b *stack) int { return cmp.Or(cmp.Compare(b.total, a.total), cmp.Compare(a.label, b.label)) })
		if rest, ok := others[pool]; ok && by == "project" {
			if len(stacks) > topProjects { // cannot happen: points hold the top projects alone
				stacks = stacks[:topProjects]
			}
			stacks = append(stacks, &stack{label: "others", col: rest})
		} else if by == "project" && len(stacks) > topProjects {
			rest := &stack{label: "others", col: p.column()}
			for _, s := range stacks[topProjects:] {
				for i, v := range s.col {
					if v != nil {
						rest.col.add(i, *v)
					}
				}
			}
			stacks = append(stacks[:topProjects], rest)
		}
		c := p.chart("usage-pool-"+pool, "Node pool "+pool)
		for i, s := range stacks {
			c.Series = append(c.Series, views.UsageSeries{Key: "s" + strconv.Itoa(i), Label: s.label, Kind: "stack",
				Values: s.col.recorded(recordedIn[pool]).rounded()})
		}
		c.Series = append(c.Series, views.UsageSeries{Key: "capacity", Label: "Capacity", Kind: "line", Values: capCols[pool].rounded()})
		out.Charts = append(out.Charts, c)
	}
	return out
}

// chartsCSV writes the charts' data as a CSV file, one row a value: chart, bucket start
// (UTC, RFC 3339), series, value ("" for a bucket the history did not record). It is the
// charts' table for a reader without JavaScript and for spreadsheets.
func chartsCSV(c echo.Context, charts views.UsageCharts) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"chart", "at", "series", "value"})
	for _, ch := range charts.Charts {
		for _, s := range ch.Series {
			for i, at := range ch.At {
				v := ""
				if s.Values[i] != nil {
					v = strconv.FormatFloat(*s.Values[i], 'f', -1, 64)
				}
				_ = w.Write([]string{csvText(ch.Title), time.Unix(at, 0).UTC().Format(time.RFC3339), csvText(s.Label), v})
			}
		}
	}
	w.Flush()
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="usage-`+charts.Range+`.csv"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
}
