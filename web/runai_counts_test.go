package web_test

import (
	"encoding/json"
	"testing"
)

// countRoute is a Run:ai /count route beside the list whose items it counts.
type countRoute struct {
	count, list, key string
	// elsewhere is a filterBy term matching only what is outside project alpha's department.
	elsewhere string
}

var countRoutes = []countRoute{
	{"/api/v1/workloads/count", "/api/v1/workloads", "workloads", "projectName==gamma"},
	{"/api/v1/org-unit/projects/count", "/api/v1/org-unit/projects", "projects", "name==gamma"},
	{"/api/v1/org-unit/departments/count", "/api/v1/org-unit/departments", "departments", "name==ops"},
}

// countAs GETs a /count route as token and returns its count, failing unless it is a 200 with
// Run:ai's CountResponse ({"count": n} and nothing else).
func countAs(t *testing.T, f *workloadFixture, token, path string) int {
	t.Helper()
	r := doAs(t, f.srv, token, "GET", path, "", "")
	if r.status != 200 {
		t.Fatalf("GET %s = %d: %s", path, r.status, r.body)
	}
	return decode[struct {
		Count int `json:"count"`
	}](t, r.body).Count
}

// listedAs is the number of items a list shows token (every page's worth: the fixture is small).
func listedAs(t *testing.T, f *workloadFixture, token, path, key string) int {
	t.Helper()
	r := doAs(t, f.srv, token, "GET", path, "", "")
	if r.status != 200 {
		t.Fatalf("GET %s = %d: %s", path, r.status, r.body)
	}
	return len(decodeList[json.RawMessage](t, r.body, key).Items)
}

// Each /count route counts what its list shows the caller, with the same filterBy and search:
// a viewer or researcher of project alpha counts nothing of project gamma (department ops)
// and no more than the list shows them; an admin counts everything.
func TestCountsCountWhatTheListShows(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, nil)
	admin := tokenOf(f.srv)
	callers := map[string]string{
		"a viewer of alpha":     newAPIKey(t, f.st, "viewer", "project", f.alpha),
		"a researcher of alpha": newAPIKey(t, f.st, "researcher", "project", f.alpha),
		"an admin":              admin,
	}
	for who, token := range callers {
		for _, r := range countRoutes {
			for _, query := range []string{"", "?filterBy=" + r.elsewhere, "?search=a"} {
				t.Run(who+" "+r.count+query, func(t *testing.T) {
					got, want := countAs(t, f, token, r.count+query), listedAs(t, f, token, r.list+query+sep(query)+"limit=500", r.key)
					if got != want {
						t.Errorf("count = %d, the list shows %d", got, want)
					}
					if token != admin && query == "?filterBy="+r.elsewhere && got != 0 {
						t.Errorf("%s counts %d of department ops", who, got)
					}
					if token == admin && query == "?filterBy="+r.elsewhere && got != 1 {
						t.Errorf("the admin counts %d, want 1", got)
					}
				})
			}
		}
	}

	t.Run("the viewer counts alpha's unfinished workloads, the admin every project's", func(t *testing.T) {
		if got := countAs(t, f, callers["a viewer of alpha"], "/api/v1/workloads/count"); got != 2 {
			t.Errorf("viewer's count = %d, want 2 (train-a, train-b)", got)
		}
		if got := countAs(t, f, admin, "/api/v1/workloads/count"); got != 5 {
			t.Errorf("admin's count = %d, want 5", got)
		}
		if got := countAs(t, f, admin, "/api/v1/workloads/count?deleted=true"); got != 1 {
			t.Errorf("admin's count of finished ones = %d, want 1 (serve-c)", got)
		}
	})

	t.Run("node pools, shared by everyone, count alike for everyone", func(t *testing.T) {
		want := listedAs(t, f, admin, "/api/v1/node-pools", "nodePools")
		for who, token := range callers {
			if got := countAs(t, f, token, "/api/v1/node-pools/count"); got != want {
				t.Errorf("%s counts %d node pools, the list has %d", who, got, want)
			}
		}
		if got := countAs(t, f, admin, "/api/v1/node-pools/count?filterBy=name==nothing-is-called-this"); got != 0 {
			t.Errorf("count of no pool = %d", got)
		}
	})

	t.Run("a filter the list refuses, the count refuses alike", func(t *testing.T) {
		for _, r := range countRoutes {
			c := doAs(t, f.srv, admin, "GET", r.count+"?filterBy=secret==1", "", "")
			l := doAs(t, f.srv, admin, "GET", r.list+"?filterBy=secret==1", "", "")
			if c.status != 400 || string(c.body) != string(l.body) {
				t.Errorf("%s: count answered %d %s; the list %d %s", r.count, c.status, c.body, l.status, l.body)
			}
		}
	})
}

func sep(query string) string {
	if query == "" {
		return "?"
	}
	return "&"
}
