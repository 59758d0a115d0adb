package web_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type usagePoint struct {
	At              time.Time `json:"at"`
	NodePool        string    `json:"nodePool"`
	ProjectID       string    `json:"projectId"`
	DepartmentID    string    `json:"departmentId"`
	Allocated       float64   `json:"allocated"`
	NonPreemptible  float64   `json:"nonPreemptible"`
	Preemptible     float64   `json:"preemptible"`
	Borrowed        float64   `json:"borrowed"`
	Pending         float64   `json:"pending"`
	Deserved        float64   `json:"deserved"`
	FairShare       float64   `json:"fairShare"`
	Preemptions     int       `json:"preemptions"`
	Reclaims        int       `json:"reclaims"`
	RecordedSeconds float64   `json:"recordedSeconds"`
}

type usageSeries struct {
	From        time.Time    `json:"from"`
	To          time.Time    `json:"to"`
	StepSeconds float64      `json:"stepSeconds"`
	Projects    []usagePoint `json:"projects"`
	Capacity    []struct {
		At              time.Time `json:"at"`
		NodePool        string    `json:"nodePool"`
		GPUs            float64   `json:"gpus"`
		RecordedSeconds float64   `json:"recordedSeconds"`
	} `json:"capacity"`
}

type usageDay struct {
	Day                    string  `json:"day"`
	NodePool               string  `json:"nodePool"`
	ProjectID              string  `json:"projectId"`
	DepartmentID           string  `json:"departmentId"`
	AllocatedGPUHours      float64 `json:"allocatedGpuHours"`
	NonPreemptibleGPUHours float64 `json:"nonPreemptibleGpuHours"`
	BorrowedGPUHours       float64 `json:"borrowedGpuHours"`
	PendingGPUHours        float64 `json:"pendingGpuHours"`
	DeservedGPUHours       float64 `json:"deservedGpuHours"`
	FairShareGPUHours      float64 `json:"fairShareGpuHours"`
	Preemptions            int     `json:"preemptions"`
	Reclaims               int     `json:"reclaims"`
}

type usageDays struct {
	From time.Time  `json:"from"`
	To   time.Time  `json:"to"`
	Days []usageDay `json:"days"`
}

// usageQuery is the query of Arbiter's usage routes over the history's two hours.
func usageQuery(extra ...string) string {
	v := url.Values{"from": {usageStart.Format(time.RFC3339)}, "to": {usageStart.Add(2 * time.Hour).Format(time.RFC3339)}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Add(extra[i], extra[i+1])
	}
	return "?" + v.Encode()
}

// Arbiter's own usage route answers what Run:ai's metric types lack: the allocation split,
// pending demand, deserved quota and fair share, preemptions, per project and pool.
func TestArbiterUsageSplitsTheAllocation(t *testing.T) {
	t.Parallel()
	w := newUsageWorld(t)
	got := decode[usageSeries](t, send(t, w.srv, "GET", "/api/v1/arbiter/usage"+usageQuery("step", "1h", "projectId", w.proj["A1"], "projectId", w.proj["B1"]), "", 200).body)
	want := []usagePoint{
		{At: usageStart, NodePool: "a100", ProjectID: w.proj["A1"], DepartmentID: w.dept["A"], Allocated: 4, NonPreemptible: 2, Preemptible: 1, Borrowed: 1, Pending: 1, Deserved: 2, RecordedSeconds: 3600},
		{At: usageStart, NodePool: "a100", ProjectID: w.proj["B1"], DepartmentID: w.dept["B"], Allocated: 3, Borrowed: 3, Deserved: 2, Preemptions: 1, RecordedSeconds: 3600},
		{At: usageStart.Add(time.Hour), NodePool: "a100", ProjectID: w.proj["A1"], DepartmentID: w.dept["A"], Deserved: 2, RecordedSeconds: 3600},
		{At: usageStart.Add(time.Hour), NodePool: "a100", ProjectID: w.proj["B1"], DepartmentID: w.dept["B"], Allocated: 3, Borrowed: 3, Deserved: 2, RecordedSeconds: 3600},
	}
	sortPoints(want)
	if d := cmp.Diff(want, got.Projects); d != "" {
		t.Errorf("usage of A1 and B1 by the hour (-want +got):\n%s", d)
	}
	if got.StepSeconds != 3600 || len(got.Capacity) != 2 || got.Capacity[0].GPUs != 8 {
		t.Errorf("step %v, capacity %+v; want an hour and 8 GPUs in each hour", got.StepSeconds, got.Capacity)
	}
	days := decode[usageDays](t, send(t, w.srv, "GET", "/api/v1/arbiter/usage/days"+usageQuery("departmentId", w.dept["A"]), "", 200).body)
	wantDays := []usageDay{
		{Day: "2026-11-02", NodePool: "a100", ProjectID: w.proj["A1"], DepartmentID: w.dept["A"], AllocatedGPUHours: 4, NonPreemptibleGPUHours: 2, BorrowedGPUHours: 1, PendingGPUHours: 1, DeservedGPUHours: 4},
		{Day: "2026-11-02", NodePool: "a100", ProjectID: w.proj["A2"], DepartmentID: w.dept["A"], AllocatedGPUHours: 2, NonPreemptibleGPUHours: 2, DeservedGPUHours: 4},
	}
	if w.proj["A2"] < w.proj["A1"] {
		wantDays[0], wantDays[1] = wantDays[1], wantDays[0]
	}
	if d := cmp.Diff(wantDays, days.Days); d != "" {
		t.Errorf("department A's GPU-hours per day (-want +got):\n%s", d)
	}
	// By default the step is the period's 200th part, but no finer than the history still
	// holds for the period's start: ten days ago, hourly.
	tenDaysAgo := time.Now().Add(-10 * 24 * time.Hour).Truncate(time.Hour)
	old := decode[usageSeries](t, send(t, w.srv, "GET", "/api/v1/arbiter/usage?"+url.Values{"from": {tenDaysAgo.Format(time.RFC3339)},
		"to": {tenDaysAgo.Add(24 * time.Hour).Format(time.RFC3339)}}.Encode(), "", 200).body)
	if old.StepSeconds != 3600 {
		t.Errorf("the default step ten days back is %v s, want an hour", old.StepSeconds)
	}
	for _, c := range []struct{ query, names string }{
		{"?" + url.Values{"from": {tenDaysAgo.Format(time.RFC3339)}, "to": {tenDaysAgo.Add(time.Hour).Format(time.RFC3339)}, "step": {"5m"}}.Encode(), "raw samples, which are kept 48 hours, and the period starts before that; ask for a step of 1h or more"},
		{usageQuery("step", "soon"), "step"},
		{usageQuery("step", "1s"), "step"},
		{usageQuery("projectId", "alpha"), "projectId"},
		{usageQuery("departmentId", "a"), "departmentId"},
		{usageQuery("nodePool", ""), "nodePool"},
		{"?from=2026-11-02T10:00:00Z", "to is required"},
	} {
		r := do(t, w.srv, "GET", "/api/v1/arbiter/usage"+c.query, "", "")
		if r.status != 400 || !strings.Contains(r.refusal(t).Message, c.names) {
			t.Errorf("GET /api/v1/arbiter/usage%s = %d %s, want 400 naming %q", c.query, r.status, r.body, c.names)
		}
	}
}

func sortPoints(ps []usagePoint) {
	slices.SortFunc(ps, func(a, b usagePoint) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.ProjectID, b.ProjectID)
	})
}
