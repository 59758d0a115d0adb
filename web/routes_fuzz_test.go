package web_test

import (
	"net/url"
	"strings"
	"testing"
)

// fuzzRoute is a route FuzzRoutes drives: the fuzzed query string goes on every one, the
// fuzzed body on those that take one (as JSON or as a form).
type fuzzRoute struct{ method, path, contentType string }

func fuzzRoutes(f inputFixture) []fuzzRoute {
	project, department := "/api/v1/org-unit/projects/"+f.proj, "/api/v1/org-unit/departments/"+f.dept
	return []fuzzRoute{
		// API bodies.
		{"PUT", project, jsonCT},
		{"PUT", project + "/resources", jsonCT},
		{"POST", "/api/v1/org-unit/projects", jsonCT},
		{"PUT", department, jsonCT},
		{"POST", "/api/v1/org-unit/departments", jsonCT},
		{"PUT", "/api/v1/node-pools/" + f.pool, jsonCT},
		{"POST", "/api/v1/node-pools", jsonCT},
		{"POST", "/api/v1/api-keys", jsonCT},
		{"POST", "/api/v1/access-rules", jsonCT},
		{"PUT", "/api/v1/workload-types/e3bde289-67b6-5900-bcc8-0f58296e4d8e", jsonCT},
		{"PUT", "/api/v1/workload-categories/5598136f-0c21-566a-a1bb-c3329c036650", jsonCT},
		// Forms, sign-in first: it is reachable without signing in.
		{"POST", "/login", formCT},
		{"POST", "/projects/" + f.proj + "/policy", formCT},
		{"POST", "/projects/" + f.proj + "/quotas/" + f.pool, formCT},
		{"POST", "/projects/" + f.proj, formCT},
		{"POST", "/projects", formCT},
		{"POST", "/departments/" + f.dept + "/quotas/" + f.pool, formCT},
		{"POST", "/departments", formCT},
		{"POST", "/node-pools/" + f.pool, formCT},
		{"POST", "/access/keys", formCT},
		{"POST", "/access/rules", formCT},
		{"POST", "/workload-types/e3bde289-67b6-5900-bcc8-0f58296e4d8e", formCT},
		// Lists and pages (the list-query parser, the event-history filters).
		{"GET", "/api/v1/org-unit/projects", ""},
		{"GET", "/api/v1/org-unit/departments", ""},
		{"GET", "/api/v1/node-pools", ""},
		{"GET", "/api/v1/workload-priorities", ""},
		{"GET", "/api/v1/workload-types", ""},
		{"GET", "/api/v1/workloads", ""},
		{"GET", "/api/v1/workloads/pods", ""},
		{"GET", "/api/v1/workloads/pods/count", ""},
		{"GET", "/api/v1/workloads/" + f.pool + "/pods", ""},    // the query is read before the workload: a 400 or a 404
		{"GET", "/api/v1/workloads/" + f.pool + "/history", ""}, // as the pods
		{"GET", "/api/v1/audit/log", ""},
		{"GET", "/api/v1/access-rules", ""},
		{"GET", project + "/metrics", ""}, // the usage history's routes
		{"GET", department + "/metrics", ""},
		{"POST", "/api/v1/org-unit/reports", jsonCT},
		{"GET", "/api/v1/org-unit/reports", ""},
		{"GET", "/api/v1/arbiter/usage", ""},
		{"GET", "/api/v1/arbiter/usage/days", ""},
		{"GET", "/projects", ""},
		{"GET", "/projects.csv", ""},
		{"GET", "/node-pools", ""},
		{"GET", "/event-history", ""},
		{"GET", "/priorities", ""},
	}
}

// FuzzRoutes drives the real handler over real PostgreSQL with any query string and body on
// the routes above: nothing a caller sends may produce a 5xx. The seed corpus (run by every
// go test) holds the bad inputs of input_test.go on the route each concerns, and each input on every route.
func FuzzRoutes(f *testing.F) {
	fx := newInputFixture(f)
	routes := fuzzRoutes(fx)
	index := map[string]uint8{}
	for i, r := range routes {
		index[r.method+" "+r.path] = uint8(i)
	}
	// input_test.go's cases, on their own routes.
	for _, tc := range badInputCases(fx) {
		path, query, _ := strings.Cut(tc.path, "?")
		i, ok := index[tc.method+" "+path]
		if !ok {
			continue // a route of its own (a NUL path); TestBadInputIs400NamingTheFieldAndWritesNothing covers it
		}
		f.Add(i, query, tc.body)
	}
	// Each query string on every route, each body on every route of its kind, and valid ones.
	queries := []string{"sortBy=name;drop", "search=a%00b", "search=%ff", "filterBy=name==a%00", "filterBy=value==99999999999",
		"filterBy=priorityValue>=9223372036854775808", "offset=9223372036854775807", "limit=500&offset=99999999999999",
		"subject=%00&action=%ff", "start=x&end=y", "%zz", "sortBy=name&sortOrder=desc", "verbosity=%ff&completed=%00",
		"filterBy=createdAt>=2025-01-01T00:00:00Z,nodeName!@n", "deleted=true&completed=all&verbosity=full"}
	bodies := map[string][]string{
		jsonCT: {`{"policy":{"minRuntimeSeconds":9223372036854775807}}`, `{"gpu":{"deserved":4294967296}}`,
			`[{"nodePool":{"name":"a100"},"gpu":{"deserved":4294967296,"overQuotaWeight":2147483648}}]`,
			`{"name":"a\u0000","subject":"b\u0000","subjectType":"user","role":"viewer"}`, "{\"name\":\"\xff\"}",
			`{"name":"a","name":"b"}`, `{"Policy":{}}`, `{"namespaces":"x"}`, `{"expiresAt":5}`, `{"preemptibility":"\u0000"}`,
			`{"name":"gamma","departmentId":"` + fx.dept + `"}`, `{"subjectType":"group","subject":"ops","role":"viewer"}`, "{}"},
		formCT: {"username=a%00&password=x", "minRuntimeSeconds=9223372036854775807", "deserved=4294967296&weight=2147483648&limit=-2",
			"name=%ff&subject=%00&role=viewer&subjectType=user", "days=99999999999999&name=k&role=viewer", "name=%zz",
			"preemptibility=%00", "name=delta&departmentId=" + fx.dept, ""},
	}
	for i, r := range routes {
		for _, q := range queries {
			f.Add(uint8(i), q, "")
		}
		for _, b := range bodies[r.contentType] {
			f.Add(uint8(i), "", b)
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, query, body string) {
		r := routes[int(route)%len(routes)]
		if r.method == "GET" {
			body = ""
		}
		rec := fx.serve(r.method, r.path, r.contentType, query, body)
		if rec.Code >= 500 {
			t.Fatalf("%s %s?%s with body %q = %d: %.300s", r.method, r.path, query, body, rec.Code, rec.Body)
		}
		if rec.Code == 400 && strings.TrimSpace(rec.Body.String()) == "" {
			t.Fatalf("%s %s?%s: a 400 without a sentence", r.method, r.path, url.PathEscape(query))
		}
	})
}
