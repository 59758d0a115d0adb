package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A project's metrics are its GPUs allocated (non-preemptible, preemptible and borrowed
// together) and its deserved quota, averaged over each bucket; an hour in which it held
// nothing is 0, not missing.
func TestProjectMetricsAreTheHistoryAveragedPerBucket(t *testing.T) {
	t.Parallel()
	w := newUsageWorld(t)
	got := decode[metricsAnswer](t, send(t, w.srv, "GET", "/api/v1/org-unit/projects/"+w.proj["A1"]+"/metrics"+window("GPU_ALLOCATION,GPU_QUOTA"), "", 200).body)
	want := metricsAnswer{Measurements: []measurement{
		{Type: "GPU_ALLOCATION", Values: hourly("4", "0")},
		{Type: "GPU_QUOTA", Values: hourly("2", "2")},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("project A1's metrics (-want +got):\n%s", d)
	}
	// One sample over both hours averages them.
	one := decode[metricsAnswer](t, send(t, w.srv, "GET", "/api/v1/org-unit/projects/"+w.proj["A1"]+"/metrics"+window("GPU_ALLOCATION", "numberOfSamples", "1"), "", 200).body)
	if d := cmp.Diff(metricsAnswer{Measurements: []measurement{{Type: "GPU_ALLOCATION", Values: []metricValue{{Value: "2", Timestamp: usageStart}}}}}, one); d != "" {
		t.Errorf("A1 in one sample (-want +got):\n%s", d)
	}
	// A pool the project never ran in has the project at 0 wherever the pool was recorded:
	// h100 was not recorded at all, so there is no value.
	create(t, w.srv, "/api/v1/node-pools", `{"name":"h100","labelKey":"arbiter.dev/node-pool"}`)
	none := decode[metricsAnswer](t, send(t, w.srv, "GET", "/api/v1/org-unit/projects/"+w.proj["A1"]+"/metrics"+window("GPU_ALLOCATION", "nodepoolName", "h100"), "", 200).body)
	if d := cmp.Diff(metricsAnswer{Measurements: []measurement{{Type: "GPU_ALLOCATION", Values: []metricValue{}}}}, none); d != "" {
		t.Errorf("A1 in h100 (-want +got):\n%s", d)
	}
}

// A department's allocation sums its projects as the history recorded them.
func TestDepartmentMetricsSumItsProjects(t *testing.T) {
	t.Parallel()
	w := newUsageWorld(t)
	got := decode[metricsAnswer](t, send(t, w.srv, "GET", "/api/v1/org-unit/departments/"+w.dept["A"]+"/metrics"+window("GPU_ALLOCATION"), "", 200).body)
	if d := cmp.Diff(metricsAnswer{Measurements: []measurement{{Type: "GPU_ALLOCATION", Values: hourly("5", "1")}}}, got); d != "" {
		t.Errorf("department A (-want +got):\n%s", d)
	}
	empty := decode[metricsAnswer](t, send(t, w.srv, "GET", "/api/v1/org-unit/departments/"+w.dept["C"]+"/metrics"+window("GPU_ALLOCATION"), "", 200).body)
	if d := cmp.Diff(metricsAnswer{Measurements: []measurement{{Type: "GPU_ALLOCATION", Values: hourly("0", "0")}}}, empty); d != "" {
		t.Errorf("department C, which has no projects (-want +got):\n%s", d)
	}
}

// The cluster's and a node pool's metrics: capacity, projects' deserved quotas, allocated and
// unallocated GPUs; grouped by node pool, project or department.
func TestClusterAndNodePoolMetrics(t *testing.T) {
	t.Parallel()
	w := newUsageWorld(t)
	cluster := clusterUUID(t, w.srv)
	all := "TOTAL_GPU,GPU_QUOTA,ALLOCATED_GPU,UNALLOCATED_GPU"
	want := []measurement{
		{Type: "TOTAL_GPU", Values: hourly("8", "8")},
		{Type: "GPU_QUOTA", Values: hourly("6", "6")},
		{Type: "ALLOCATED_GPU", Values: hourly("8", "4")},
		{Type: "UNALLOCATED_GPU", Values: hourly("0", "4")},
	}
	got := decode[metricsAnswer](t, send(t, w.srv, "GET", "/api/v1/clusters/"+cluster+"/metrics"+window(all), "", 200).body)
	if d := cmp.Diff(metricsAnswer{Measurements: want}, got); d != "" {
		t.Errorf("the cluster's metrics (-want +got):\n%s", d)
	}
	pool := decode[metricsAnswer](t, send(t, w.srv, "GET", "/api/v1/clusters/"+cluster+"/nodepools/a100/metrics"+window(all), "", 200).body)
	if d := cmp.Diff(metricsAnswer{Measurements: want}, pool); d != "" {
		t.Errorf("pool a100's metrics (-want +got):\n%s", d)
	}
	byPool := decode[metricsAnswer](t, send(t, w.srv, "GET", "/api/v1/clusters/"+cluster+"/metrics"+window("TOTAL_GPU", "groupBy", "Nodepool"), "", 200).body)
	if d := cmp.Diff(metricsAnswer{Measurements: []measurement{{Type: "TOTAL_GPU", Values: hourly("8", "8"), Groups: []group{{Key: "Nodepool", Value: "a100"}}}}}, byPool); d != "" {
		t.Errorf("capacity by pool (-want +got):\n%s", d)
	}
	byDept := decode[metricsAnswer](t, send(t, w.srv, "GET", "/api/v1/clusters/"+cluster+"/metrics"+window("ALLOCATED_GPU", "groupBy", "Department"), "", 200).body)
	wantByDept := []measurement{
		{Type: "ALLOCATED_GPU", Values: hourly("5", "1"), Groups: []group{{Key: "Department", Value: w.dept["A"]}}},
		{Type: "ALLOCATED_GPU", Values: hourly("3", "3"), Groups: []group{{Key: "Department", Value: w.dept["B"]}}},
	}
	if w.dept["B"] < w.dept["A"] {
		wantByDept[0], wantByDept[1] = wantByDept[1], wantByDept[0]
	}
	if d := cmp.Diff(metricsAnswer{Measurements: wantByDept}, byDept); d != "" {
		t.Errorf("allocation by department (-want +got):\n%s", d)
	}
}

// Bad input is a 400 whose sentence names the parameter; an unknown id or name a 404.
func TestMetricsRefuseBadInputNamingTheField(t *testing.T) {
	t.Parallel()
	w := newUsageWorld(t)
	cluster := clusterUUID(t, w.srv)
	project := "/api/v1/org-unit/projects/" + w.proj["A1"] + "/metrics"
	old := time.Now().Add(-10 * 24 * time.Hour).Truncate(time.Hour)
	cases := []struct {
		path   string
		status int
		names  string // a word the sentence must hold
	}{
		{project + window("GPU_ALLOCATION", "end", usageStart.Add(-time.Hour).Format(time.RFC3339)), 400, "end"},
		{project + window("GPU_ALLOCATION", "start", "yesterday"), 400, "start"},
		{project + window("GPU_ALLOCATION", "numberOfSamples", "1001"), 400, "numberOfSamples"},
		{project + window("GPU_ALLOCATION", "numberOfSamples", "-1"), 400, "numberOfSamples"},
		{project + window("GPU_ALLOCATION", "numberOfSamples", "many"), 400, "numberOfSamples"},
		{project + window("GPU_PER_PERSON"), 400, "metricType"},
		{project + window("CPU_QUOTA_MILLICORES"), 400, "CPU"},
		{project + window(""), 400, "metricType is required"},
		{project + window("GPU_ALLOCATION", "start", usageStart.Add(-400*24*time.Hour).Format(time.RFC3339)), 400, "366 days"},
		{project + window("GPU_ALLOCATION", "start", old.Format(time.RFC3339), "end", old.Add(24*time.Hour).Format(time.RFC3339), "numberOfSamples", "1000"), 400, "numberOfSamples"},
		{project + window("GPU_ALLOCATION", "start", old.Add(-90*24*time.Hour).Format(time.RFC3339), "end", old.Add(-80*24*time.Hour).Format(time.RFC3339), "numberOfSamples", "100"), 400, "hourly rows, which are kept 90 days"},
		{project + window("GPU_ALLOCATION", "nodepoolName", "no-such-pool"), 404, "no-such-pool"},
		{"/api/v1/org-unit/departments/" + w.dept["A"] + "/metrics" + window("GPU_QUOTA"), 400, "deserved quota"},
		{"/api/v1/clusters/" + cluster + "/metrics" + window("ALLOCATED_GPU", "groupBy", "Category"), 400, "groupBy"},
		{"/api/v1/clusters/" + cluster + "/metrics" + window("TOTAL_GPU", "groupBy", "Project"), 400, "groupBy"},
		{"/api/v1/clusters/" + cluster + "/metrics" + window("WORKLOADS_COUNT"), 400, "metricType"},
		{"/api/v1/org-unit/projects/6723b9d7-73d1-5e4c-a494-d8fdeddc541c/metrics" + window("GPU_ALLOCATION"), 404, "project"},
		{"/api/v1/org-unit/projects/not-an-id/metrics" + window("GPU_ALLOCATION"), 400, "UUID"},
		{"/api/v1/org-unit/departments/6723b9d7-73d1-5e4c-a494-d8fdeddc541c/metrics" + window("GPU_ALLOCATION"), 404, "department"},
		{"/api/v1/clusters/6723b9d7-73d1-5e4c-a494-d8fdeddc541c/metrics" + window("TOTAL_GPU"), 404, "cluster"},
		{"/api/v1/clusters/" + cluster + "/nodepools/no-such-pool/metrics" + window("TOTAL_GPU"), 404, "no-such-pool"},
	}
	for _, c := range cases {
		r := do(t, w.srv, "GET", c.path, "", "")
		if r.status != c.status || !strings.Contains(r.refusal(t).Message, c.names) {
			t.Errorf("GET %s = %d %s, want %d naming %q", c.path, r.status, r.body, c.status, c.names)
		}
	}
}
