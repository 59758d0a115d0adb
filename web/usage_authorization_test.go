package web_test

import (
	"strings"
	"testing"
)

// TestUsageRoutesByRoleAndScope walks roles × scopes × the usage routes: a project's or a
// department's metrics are theirs who may read it (404 for anyone else, as for an id that does
// not exist); the cluster's and its pools' metrics and the consumption reports need a grant at
// the system scope, and making or deleting a report the admin's; Arbiter's own usage routes
// answer only the projects the caller may read. Without credentials every route is a 401.
func TestUsageRoutesByRoleAndScope(t *testing.T) {
	t.Parallel()
	w := newUsageWorld(t)
	cluster := clusterUUID(t, w.srv)
	rep := sendAs[report](t, w.srv, "POST", "/api/v1/org-unit/reports", reportBody("shared", "Project"), 202)
	projectPath := func(key string) string {
		return "/api/v1/org-unit/projects/" + w.proj[key] + "/metrics" + window("GPU_ALLOCATION,GPU_QUOTA")
	}
	departmentPath := func(key string) string {
		return "/api/v1/org-unit/departments/" + w.dept[key] + "/metrics" + window("GPU_ALLOCATION")
	}
	systemReads := []string{
		"/api/v1/clusters/" + cluster + "/metrics" + window("ALLOCATED_GPU", "groupBy", "Project"),
		"/api/v1/clusters/" + cluster + "/nodepools/a100/metrics" + window("ALLOCATED_GPU"),
		"/api/v1/org-unit/reports", "/api/v1/org-unit/reports/count",
		"/api/v1/org-unit/reports/" + rep.ID, "/api/v1/org-unit/reports/" + rep.ID + "/file",
	}
	everyone := []string{"/api/v1/org-unit/reports/availability", "/api/v1/arbiter/usage" + usageQuery(), "/api/v1/arbiter/usage/days" + usageQuery()}

	all := append(append([]string{projectPath("A1"), departmentPath("A")}, systemReads...), everyone...)
	for _, path := range all {
		if r := doAs(t, w.srv, "", "GET", path, "", ""); r.status != 401 {
			t.Errorf("GET %s without credentials = %d %s", path, r.status, r.body)
		}
	}
	if r := doAs(t, w.srv, "", "POST", "/api/v1/org-unit/reports", "application/json", reportBody("x", "")); r.status != 401 {
		t.Errorf("POST a report without credentials = %d %s", r.status, r.body)
	}

	// The admin runs last: it deletes the shared report.
	cases := append(roleCases[1:], roleCases[0])
	for _, rc := range cases {
		t.Run(rc.role+"@"+rc.scope, func(t *testing.T) {
			scopeType, scopeID := w.scopeID(rc.scope)
			token := newAPIKey(t, w.st, rc.role, scopeType, scopeID)
			status := func(path string, want int) {
				t.Helper()
				if r := doAs(t, w.srv, token, "GET", path, "", ""); r.status != want {
					t.Errorf("GET %s = %d, want %d: %.300s", path, r.status, want, r.body)
				}
			}
			seen := func(list string, x string, yes int) int {
				if has(list, x) {
					return yes
				}
				return 404
			}
			for _, p := range []string{"A1", "A2", "B1"} {
				status(projectPath(p), seen(rc.projects, p, 200))
				status("/api/v1/arbiter/usage"+usageQuery("projectId", w.proj[p]), seen(rc.projects, p, 200))
				status("/api/v1/arbiter/usage/days"+usageQuery("projectId", w.proj[p]), seen(rc.projects, p, 200))
			}
			for _, d := range []string{"A", "B", "C"} {
				status(departmentPath(d), seen(rc.depts, d, 200))
				status("/api/v1/arbiter/usage"+usageQuery("departmentId", w.dept[d]), seen(rc.depts, d, 200))
			}
			systemStatus := 403
			if rc.scope == "system" {
				systemStatus = 200
			}
			for _, path := range systemReads {
				status(path, systemStatus)
			}
			for _, path := range everyone {
				status(path, 200)
			}

			// Arbiter's usage answers name only the projects the caller may read.
			series := decode[usageSeries](t, doAs(t, w.srv, token, "GET", "/api/v1/arbiter/usage"+usageQuery(), "", "").body)
			days := decode[usageDays](t, doAs(t, w.srv, token, "GET", "/api/v1/arbiter/usage/days"+usageQuery(), "", "").body)
			var inSeries, inDays []string
			for _, p := range series.Projects {
				inSeries = appendOnce(inSeries, w.keyOfProject(p.ProjectID))
			}
			for _, d := range days.Days {
				inDays = appendOnce(inDays, w.keyOfProject(d.ProjectID))
			}
			if strings.Join(inSeries, ",") != rc.projects || strings.Join(inDays, ",") != rc.projects {
				t.Errorf("usage names projects %v and days %v, want %s", inSeries, inDays, rc.projects)
			}

			adminStatus := func(ok int) int {
				if rc.admin {
					return ok
				}
				return 403
			}
			if r := doAs(t, w.srv, token, "POST", "/api/v1/org-unit/reports", "application/json", reportBody("by "+rc.role, "")); r.status != adminStatus(202) {
				t.Errorf("POST a report = %d, want %d: %s", r.status, adminStatus(202), r.body)
			}
			if r := doAs(t, w.srv, token, "DELETE", "/api/v1/org-unit/reports/"+rep.ID, "", ""); r.status != adminStatus(204) {
				t.Errorf("DELETE the report = %d, want %d: %s", r.status, adminStatus(204), r.body)
			}
		})
	}
}

// keyOfProject is the world's name ("A1") of a project id.
func (w *orgWorld) keyOfProject(id string) string {
	for k, v := range w.proj {
		if v == id {
			return k
		}
	}
	return id
}

// appendOnce appends x unless the (sorted) list holds it already, keeping it sorted.
func appendOnce(list []string, x string) []string {
	for _, y := range list {
		if y == x {
			return list
		}
	}
	list = append(list, x)
	for i := len(list) - 1; i > 0 && list[i] < list[i-1]; i-- {
		list[i], list[i-1] = list[i-1], list[i]
	}
	return list
}
