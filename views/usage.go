package views

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/routenames"
)

// UsageRanges are the periods the charts offer, shortest first; the first is the default.
var UsageRanges = []string{"24h", "7d", "30d"}

// UsageRangeWords says a range in words ("the last 7 days").
func UsageRangeWords(r string) string {
	switch r {
	case "24h":
		return "the last 24 hours"
	case "7d":
		return "the last 7 days"
	case "30d":
		return "the last 30 days"
	}
	return r
}

// UsageChart is one chart's data, as its JSON endpoint answers it and its table shows it:
// series of values over shared bucket starts. A value is null for a bucket the history did
// not record (the chart leaves a gap there).
type UsageChart struct {
	ID          string        `json:"id"` // the chart's element id on its page
	Title       string        `json:"title"`
	Range       string        `json:"range"`
	From        time.Time     `json:"from"`
	To          time.Time     `json:"to"`
	StepSeconds int           `json:"stepSeconds"`
	At          []int64       `json:"at"` // bucket starts, Unix seconds
	Series      []UsageSeries `json:"series"`
}

// UsageSeries is one series of a chart. Kind says how it is drawn: "stack" (areas stacked
// in the order given, GPUs), "line" (GPUs), "count" (events per bucket, on their own scale).
type UsageSeries struct {
	Key    string     `json:"key"`
	Label  string     `json:"label"`
	Kind   string     `json:"kind"`
	Values []*float64 `json:"values"`
}

// UsageCharts are the charts one JSON endpoint answers: on the Overview allocation over time
// per node pool, stacked by department or by the top projects and the others; on a project's
// or a department's page its allocation against deserved and fair share, and its events.
type UsageCharts struct {
	Range  string       `json:"range"`
	By     string       `json:"by,omitempty"` // the Overview's grouping: "department" or "project"
	Charts []UsageChart `json:"charts"`
	// EmptyPools are the Overview's node pools that had no GPUs and held no work in the
	// period: a sentence names them instead of a chart with nothing in it.
	EmptyPools []string `json:"emptyPools,omitempty"`
}

// UsageChartsPanel is where a page puts its charts: the JSON they load, the CSV of the same
// data, and the range and grouping links.
type UsageChartsPanel struct {
	Range string
	By    string // the Overview's grouping; "" on the other pages
	// Source is the JSON endpoint's address with the range (and grouping); the CSV is it
	// with format=csv.
	Source string
	// Self is the page's own address, to which the range links add their query.
	Self string
}

// CSV is the address of the charts' data as a CSV file.
func (p UsageChartsPanel) CSV() string { return withQuery(p.Source, "format", "csv") }

// RangeLink is the page's address with another range (the grouping kept).
func (p UsageChartsPanel) RangeLink(r string) string {
	q := "range=" + r
	if p.By != "" {
		q += "&by=" + p.By
	}
	return p.Self + "?" + q
}

// ByLink is the Overview's address with another grouping (the range kept).
func (p UsageChartsPanel) ByLink(by string) string {
	return p.Self + "?range=" + p.Range + "&by=" + by
}

func withQuery(address, name, value string) string {
	sep := "?"
	if strings.Contains(address, "?") {
		sep = "&"
	}
	return address + sep + name + "=" + value
}

// ProjectUsagePage is a project's page: its usage over time and its fairness ledger.
type ProjectUsagePage struct {
	Page
	ID, Name, Department, DepartmentID string
	Usage                              UsageChartsPanel
	Ledger                             FairnessLedger
}

// DepartmentUsagePage is a department's page: its projects' usage over time.
type DepartmentUsagePage struct {
	Page
	ID, Name string
	Projects []ProjectLink // those the caller may read
	Usage    UsageChartsPanel
}

func projectsWord(n int) string {
	if n == 1 {
		return "project"
	}
	return "projects"
}

// ProjectLink names a project and links its page.
type ProjectLink struct {
	ID, Name string
}

// ProjectPage is the address of a project's page.
func ProjectPage(ctx context.Context, id string) string { return URL(ctx, routenames.Project, id) }

// DepartmentPage is the address of a department's page.
func DepartmentPage(ctx context.Context, id string) string {
	return URL(ctx, routenames.Department, id)
}

// FairnessLedger is a project's fairness ledger over a period, as the API answers it and its
// page shows it: GPU-hours it was entitled to, received, and why it fell short.
type FairnessLedger struct {
	ProjectID   string    `json:"projectId"`
	ProjectName string    `json:"projectName"`
	From        time.Time `json:"from"`
	To          time.Time `json:"to"`
	// Summary says the ledger in a sentence or three.
	Summary string               `json:"summary"`
	Total   LedgerFigures        `json:"total"`
	Pools   []FairnessLedgerPool `json:"nodePools"`
	// WorkloadsLeftOut says the project had more workloads in the period than the ledger
	// reads: the causes are shared among those it read.
	WorkloadsLeftOut bool `json:"workloadsLeftOut"`
}

// LedgerFigures are GPU-hours over the period (RecordedHours: hours the history recorded).
type LedgerFigures struct {
	Deserved       float64 `json:"deservedGpuHours"`
	FairShare      float64 `json:"fairShareGpuHours"`
	Entitled       float64 `json:"entitledGpuHours"`
	Received       float64 `json:"receivedGpuHours"`
	NonPreemptible float64 `json:"nonPreemptibleGpuHours"`
	Borrowed       float64 `json:"borrowedGpuHours"`
	Shortfall      float64 `json:"shortfallGpuHours"`
	NoDemand       float64 `json:"noDemandGpuHours"`
	RecordedHours  float64 `json:"recordedHours"`
}

// FairnessLedgerPool is the ledger in one node pool.
type FairnessLedgerPool struct {
	NodePool string `json:"nodePool"`
	LedgerFigures
	Shortfalls []LedgerShortfall `json:"shortfalls"`
}

// LedgerShortfall is part of a shortfall put down to one cause.
type LedgerShortfall struct {
	Cause    string  `json:"cause"`
	By       string  `json:"by,omitempty"`
	GPUHours float64 `json:"gpuHours"`
	Words    string  `json:"words"`
}

// GPUHours writes GPU-hours for a table: one decimal.
func GPUHours(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// readable reports whether GPU-hours show at the page's precision (GPUHours: a tenth).
func readable(v float64) bool { return v >= 0.05 }

// shownShortfalls are the causes of a shortfall large enough to read: a cause of "0.0"
// GPU-hours says nothing to a person, beside a pool that received 98 % of its entitlement.
func shownShortfalls(all []LedgerShortfall) []LedgerShortfall {
	var shown []LedgerShortfall
	for _, s := range all {
		if readable(s.GPUHours) {
			shown = append(shown, s)
		}
	}
	return shown
}

// Percent is part of whole in percent, or "—" when whole is nothing.
func Percent(part, whole float64) string {
	if whole <= 0 {
		return "—"
	}
	return strconv.FormatFloat(100*part/whole, 'f', 0, 64) + " %"
}
