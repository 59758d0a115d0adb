package conformance

import (
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// The metrics routes and the consumption reports. The conformance server runs without a
// cluster, so its usage history is empty: the metrics answers hold each asked type with no
// values, which is what the schema's shape is checked on (web/runai_metrics_test.go checks the
// figures over a recorded history); the reports are computed from that empty history.

// metricsWindow is a metrics query over the last day, in the document's example format
// (its example period, in 2023, is older than the hourly rows' retention).
func metricsWindow(metricTypes string) url.Values {
	end := time.Now().UTC()
	return url.Values{"metricType": {metricTypes}, "start": {end.Add(-24 * time.Hour).Format("2006-01-02T15:04:05.000Z")},
		"end": {end.Format("2006-01-02T15:04:05.000Z")}, "numberOfSamples": {"20"}}
}

func with(v url.Values, key, value string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = vs
	}
	out.Set(key, value)
	return out
}

// reportsMade is the report the creation check makes, read by the checks after it, for one
// run of the checks (one org).
var reportsMade sync.Map // *org -> string

func reportOf(t *testing.T, o *org) string {
	t.Helper()
	id, ok := reportsMade.Load(o)
	if !ok {
		t.Fatal("no report was made before this check")
	}
	return id.(string)
}

// measured checks a metrics answer holds one measurement of each type asked, in the order asked.
func measured(t *testing.T, c *client, x exchange, types ...string) {
	t.Helper()
	var got struct{ Measurements []struct{ Type string } }
	x.out = &got
	c.do(t, x)
	var names []string
	for _, m := range got.Measurements {
		names = append(names, m.Type)
	}
	if strings.Join(names, ",") != strings.Join(types, ",") {
		t.Errorf("measurements of %v, want %v", names, types)
	}
}

func init() {
	checked = append(checked, []struct {
		route string
		check func(t *testing.T, c *client, o *org)
	}{
		{"GET /api/v1/org-unit/projects/{projectId}/metrics", func(t *testing.T, c *client, o *org) {
			route, params := "/api/v1/org-unit/projects/{projectId}/metrics", map[string]string{"projectId": o.projectID}
			measured(t, c, exchange{method: "GET", route: route, params: params, query: metricsWindow("GPU_ALLOCATION,GPU_QUOTA"), want: 200},
				"GPU_ALLOCATION", "GPU_QUOTA")
			measured(t, c, exchange{method: "GET", route: route, params: params, query: with(metricsWindow("GPU_ALLOCATION"), "nodepoolName", "gpu-a100"), want: 200},
				"GPU_ALLOCATION")
			// Deliberately different: the usage history records GPUs only; CPU and memory types are refused.
			c.do(t, exchange{method: "GET", route: route, params: params, query: metricsWindow("CPU_ALLOCATION_MILLICORES"), want: 400})
			c.do(t, exchange{method: "GET", route: route, params: params, query: with(metricsWindow("GPU_ALLOCATION"), "end", "2023-06-05T12:09:18.211Z"), want: 400})
			c.do(t, exchange{method: "GET", route: route, params: params, query: with(metricsWindow("GPU_ALLOCATION"), "numberOfSamples", "1000"), want: 200})
			// Deliberately different: buckets under an hour come from the raw samples alone, which
			// are kept 48 hours; over an older period they are refused, saying how many samples fit.
			old := with(with(metricsWindow("GPU_ALLOCATION"), "start", "2023-06-06T12:09:18.211Z"), "end", "2023-06-07T12:09:18.211Z")
			c.do(t, exchange{method: "GET", route: route, params: params, query: with(old, "numberOfSamples", "1000"), want: 400})
			c.do(t, exchange{method: "GET", route: route, params: params, query: with(metricsWindow("GPU_ALLOCATION"), "numberOfSamples", "0"), want: 200})
			c.do(t, exchange{method: "GET", route: route, params: map[string]string{"projectId": "575c19e8-c7c3-45b0-8290-2f47397a8383"},
				query: metricsWindow("GPU_ALLOCATION"), want: 404})
		}},
		{"GET /api/v1/org-unit/departments/{departmentId}/metrics", func(t *testing.T, c *client, o *org) {
			route, params := "/api/v1/org-unit/departments/{departmentId}/metrics", map[string]string{"departmentId": o.departmentID}
			measured(t, c, exchange{method: "GET", route: route, params: params, query: metricsWindow("GPU_ALLOCATION"), want: 200}, "GPU_ALLOCATION")
			// Deliberately different: the history holds projects' deserved quotas, not the department's own.
			c.do(t, exchange{method: "GET", route: route, params: params, query: metricsWindow("GPU_QUOTA"), want: 400})
			c.do(t, exchange{method: "GET", route: route, params: map[string]string{"departmentId": "575c19e8-c7c3-45b0-8290-2f47397a8383"},
				query: metricsWindow("GPU_ALLOCATION"), want: 404})
		}},
		{"GET /api/v1/clusters/{clusterUuid}/metrics", func(t *testing.T, c *client, o *org) {
			route, params := "/api/v1/clusters/{clusterUuid}/metrics", map[string]string{"clusterUuid": c.clusterID(t, o)}
			all := "TOTAL_GPU,GPU_QUOTA,ALLOCATED_GPU,UNALLOCATED_GPU"
			measured(t, c, exchange{method: "GET", route: route, params: params, query: metricsWindow(all), want: 200},
				"TOTAL_GPU", "GPU_QUOTA", "ALLOCATED_GPU", "UNALLOCATED_GPU")
			c.do(t, exchange{method: "GET", route: route, params: params, query: with(metricsWindow("ALLOCATED_GPU"), "groupBy", "Nodepool"), want: 200})
			c.do(t, exchange{method: "GET", route: route, params: params, query: with(metricsWindow("ALLOCATED_GPU"), "groupBy", "Department"), want: 200})
			// Deliberately different: workload categories and GPU telemetry are not in the history.
			c.do(t, exchange{method: "GET", route: route, params: params, query: with(metricsWindow("ALLOCATED_GPU"), "groupBy", "Category"), want: 400})
			c.do(t, exchange{method: "GET", route: route, params: params, query: metricsWindow("GPU_UTILIZATION"), want: 400})
			c.do(t, exchange{method: "GET", route: route, params: map[string]string{"clusterUuid": "9f55255e-11ed-47c7-acef-fc4054768dbc"},
				query: metricsWindow("TOTAL_GPU"), want: 404})
		}},
		{"GET /api/v1/clusters/{clusterUuid}/nodepools/{nodepoolName}/metrics", func(t *testing.T, c *client, o *org) {
			route := "/api/v1/clusters/{clusterUuid}/nodepools/{nodepoolName}/metrics"
			measured(t, c, exchange{method: "GET", route: route, params: map[string]string{"clusterUuid": c.clusterID(t, o), "nodepoolName": "gpu-a100"},
				query: metricsWindow("TOTAL_GPU,ALLOCATED_GPU"), want: 200}, "TOTAL_GPU", "ALLOCATED_GPU")
			c.do(t, exchange{method: "GET", route: route, params: map[string]string{"clusterUuid": c.clusterID(t, o), "nodepoolName": "default-but-not"},
				query: metricsWindow("TOTAL_GPU"), want: 404})
		}},
		{"GET /api/v1/org-unit/reports/availability", func(t *testing.T, c *client, o *org) {
			var got struct{ IsAvailable bool }
			c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/reports/availability", want: 200, out: &got})
			if !got.IsAvailable {
				t.Error("reports say they are not available on a server with the usage history")
			}
		}},
		{"POST /api/v1/org-unit/reports", func(t *testing.T, c *client, o *org) {
			// The document's example values, filtered to the organization's project.
			body := map[string]any{"name": "2023 GPU report", "description": "This report shows the GPU usage of all projects in the organization",
				"start": "2023-06-07T09:09:18.211Z", "end": "2023-06-07T12:09:18.211Z", "groupBy": "Project", "filterBy": []string{"projectName==vision"}}
			var made struct{ ID, Status string }
			c.do(t, exchange{method: "POST", route: "/api/v1/org-unit/reports", body: body, want: 202, out: &made})
			if made.Status != "Ready" {
				t.Errorf("the new report is %q, want Ready", made.Status)
			}
			reportsMade.Store(o, made.ID)
			body["filterBy"] = []string{"projectName==some-name"}
			c.do(t, exchange{method: "POST", route: "/api/v1/org-unit/reports", body: body, want: 400})
			body["filterBy"], body["end"] = []string{}, "2023-06-07T08:09:18.211Z"
			c.do(t, exchange{method: "POST", route: "/api/v1/org-unit/reports", body: body, want: 400})
		}},
		{"GET /api/v1/org-unit/reports", func(t *testing.T, c *client, o *org) {
			var got struct{ Reports []struct{ ID string } }
			c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/reports", query: url.Values{"filterBy": {"name==2023 GPU report"}, "sortBy": {"createdAt"},
				"sortOrder": {"desc"}, "limit": {"10"}}, want: 200, out: &got})
			if len(got.Reports) != 1 || got.Reports[0].ID != reportOf(t, o) {
				t.Errorf("the reports named 2023 GPU report = %+v, want the one made", got.Reports)
			}
		}},
		{"GET /api/v1/org-unit/reports/count", func(t *testing.T, c *client, o *org) {
			counted(t, c, "/api/v1/org-unit/reports/count", url.Values{"filterBy": {"status==Ready"}}, 1)
			counted(t, c, "/api/v1/org-unit/reports/count", url.Values{"search": {"no such report"}}, 0)
		}},
		{"GET /api/v1/org-unit/reports/{reportId}", func(t *testing.T, c *client, o *org) {
			c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/reports/{reportId}", params: map[string]string{"reportId": reportOf(t, o)}, want: 200})
			c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/reports/{reportId}", params: map[string]string{"reportId": "575c19e8-c7c3-45b0-8290-2f47397a8383"}, want: 404})
		}},
		{"GET /api/v1/org-unit/reports/{reportId}/file", func(t *testing.T, c *client, o *org) {
			got := c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/reports/{reportId}/file", params: map[string]string{"reportId": reportOf(t, o)}, want: 200})
			if !strings.HasPrefix(string(got), "date,departmentId,department,projectId,project,allocatedGpuHours") {
				t.Errorf("the report's file starts %q, want its CSV header", clip(got))
			}
		}},
		{"DELETE /api/v1/org-unit/reports/{reportId}", func(t *testing.T, c *client, o *org) {
			params := map[string]string{"reportId": reportOf(t, o)}
			c.do(t, exchange{method: "DELETE", route: "/api/v1/org-unit/reports/{reportId}", params: params, want: 204})
			c.do(t, exchange{method: "DELETE", route: "/api/v1/org-unit/reports/{reportId}", params: params, want: 404})
		}},
	}...)
}
