package web_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// inputFixture is a server over a fresh database with pool a100, department research and
// project alpha (as orgAPI), and the pool for looking at the rows directly.
type inputFixture struct {
	srv                    *httptest.Server
	handler                http.Handler
	db                     *pgxpool.Pool
	token                  string
	pool, dept, proj, rule string
}

func newInputFixture(t testing.TB) inputFixture {
	t.Helper()
	db := testdb.New(t)
	st := store.New(db)
	d := deps(st)
	d.Workloads = st
	h := web.New(d)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	id := uuid.New()
	token, hash := auth.NewAPIKey(id)
	if _, err := st.CreateAPIKey(context.Background(), store.NewAPIKey{ID: id, Name: "fixture-admin", Role: "admin", ScopeType: "system",
		ExpiresAt: time.Now().Add(time.Hour), SecretHash: hash}, store.Actor{Subject: "test", SubjectType: "system"}); err != nil {
		t.Fatal(err)
	}
	f := inputFixture{srv: srv, handler: h, db: db, token: token}
	signIn(srv, token)
	create := func(path, body string) string {
		rec := f.serve("POST", path, jsonCT, "", body)
		if rec.Code != http.StatusCreated {
			t.Fatalf("POST %s = %d: %s", path, rec.Code, rec.Body)
		}
		return idOf(t, rec.Body.Bytes())
	}
	f.pool = create("/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool"}`)
	f.dept = create("/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":16}}]}`)
	f.proj = create("/api/v1/org-unit/projects", fmt.Sprintf(`{"name":"alpha","departmentId":%q,"namespaces":["team-alpha"],
		"resources":[{"nodePool":{"id":%q},"gpu":{"deserved":10,"limit":12,"overQuotaWeight":3}}]}`, f.dept, f.pool))
	f.rule = create("/api/v1/access-rules", `{"subjectType":"user","subject":"bob@example.com","role":"viewer"}`)
	return f
}

// serve runs one request through the real handler, in process, as the fixture's admin; the
// raw query goes in as it is, however malformed.
func (f inputFixture) serve(method, path, contentType, rawQuery, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/", strings.NewReader(body))
	req.URL.Path, req.URL.RawQuery = path, rawQuery
	req.Header.Set("Authorization", "Bearer "+f.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	return rec
}

// snapshot digests every configuration table (API keys without their last use) and counts the
// audit log's successful changes: a refused request leaves it as it was.
func snapshot(t testing.TB, db *pgxpool.Pool) string {
	t.Helper()
	var b strings.Builder
	for _, rel := range []string{"projects", "project_quotas", "project_namespaces", "departments", "department_quotas", "node_pools",
		"(SELECT id, name, role, scope_type, scope_id, expires_at, revoked_at FROM api_keys)", "access_rules", "login_failures",
		"workload_types", "workload_categories", "users", "(SELECT count(*) FROM audit_log WHERE result = 'success')"} {
		var digest string
		if err := db.QueryRow(context.Background(), `SELECT coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM `+rel+` t`).Scan(&digest); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s=%s\n", rel, digest)
	}
	return b.String()
}

const (
	jsonCT = "application/json"
	formCT = "application/x-www-form-urlencoded"
)

// inputCase is one request that must be refused with a 400 whose sentence holds mention.
type inputCase struct {
	name, method, path, contentType, body, mention string
}

// badInputCases are the text and numbers out of range of issue 13, each naming its field:
// integers beyond their column, NUL, bytes that are not UTF-8 and over-long text, in JSON
// bodies, forms and query strings; duplicate and case-mismatched JSON keys; a ';' in a query.
func badInputCases(f inputFixture) []inputCase {
	project, department := "/api/v1/org-unit/projects/"+f.proj, "/api/v1/org-unit/departments/"+f.dept
	long := func(n int) string { return strings.Repeat("é", n) } // characters, not bytes
	return []inputCase{
		// Integers beyond the column (integer: up to 2147483647), in the API...
		{"minRuntimeSeconds int64 max", "PUT", project, jsonCT, `{"policy":{"minRuntimeSeconds":9223372036854775807}}`, "policy.minRuntimeSeconds must be a whole number from 0 to 2147483647"},
		{"minRuntimeSeconds beyond int64", "PUT", project, jsonCT, `{"policy":{"minRuntimeSeconds":9223372036854775808}}`, "policy.minRuntimeSeconds must be a whole number from 0 to 2147483647"},
		{"minRuntimeSeconds fraction", "PUT", project, jsonCT, `{"policy":{"minRuntimeSeconds":1.5}}`, "policy.minRuntimeSeconds must be a whole number from 0 to 2147483647, not 1.5"},
		{"deserved 2^32", "PUT", project + "/resources", jsonCT, `[{"nodePool":{"name":"a100"},"gpu":{"deserved":4294967296}}]`, "resources[0].gpu.deserved must be a whole number from 0 to 2147483647, not 4294967296"},
		{"deserved 2^32 in a project body", "PUT", project, jsonCT, `{"resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":4294967296}}]}`, "resources[0].gpu.deserved must be a whole number from 0 to 2147483647"},
		{"deserved 2^32 in a department", "PUT", department, jsonCT, `{"resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":4294967296}}]}`, "resources[0].gpu.deserved must be a whole number from 0 to 2147483647"},
		{"deserved 2^32 in a new department", "POST", "/api/v1/org-unit/departments", jsonCT, `{"name":"new","resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":4294967296}}]}`, "resources[0].gpu.deserved must be a whole number from 0 to 2147483647"},
		{"overQuotaWeight 2^31", "PUT", project + "/resources", jsonCT, `[{"nodePool":{"name":"a100"},"gpu":{"deserved":1,"overQuotaWeight":2147483648}}]`, "resources[0].gpu.overQuotaWeight must be a whole number from 0 to 2147483647"},
		{"limit 2^31", "PUT", project + "/resources", jsonCT, `[{"nodePool":{"name":"a100"},"gpu":{"deserved":1,"limit":2147483648}}]`, "resources[0].gpu.limit must be a whole number from -1 to 2147483647"},
		// ... and in the forms.
		{"form minRuntimeSeconds", "POST", "/projects/" + f.proj + "/policy", formCT, "minRuntimeSeconds=9223372036854775807", "minimum runtime (seconds) must be a whole number from 0 to 2147483647"},
		{"form deserved", "POST", "/projects/" + f.proj + "/quotas/" + f.pool, formCT, "deserved=4294967296", "deserved GPUs in pool a100 must be a whole number from 0 to 2147483647"},
		{"form weight", "POST", "/projects/" + f.proj + "/quotas/" + f.pool, formCT, "deserved=1&weight=2147483648", "over-quota weight in pool a100 must be a whole number from 0 to 2147483647"},
		{"form limit", "POST", "/projects/" + f.proj + "/quotas/" + f.pool, formCT, "deserved=1&limit=99999999999", "limit in pool a100 must be a whole number from -1 to 2147483647"},
		{"form department deserved", "POST", "/departments/" + f.dept + "/quotas/" + f.pool, formCT, "deserved=4294967296", "deserved GPUs in pool a100 must be a whole number from 0 to 2147483647"},
		{"form new project deserved", "POST", "/projects", formCT, "name=beta&departmentId=" + f.dept + "&deserved-" + f.pool + "=4294967296", "deserved GPUs in pool a100 must be a whole number from 0 to 2147483647"},
		{"form new department weight", "POST", "/departments", formCT, "name=new&deserved-" + f.pool + "=1&weight-" + f.pool + "=2147483648", "over-quota weight in pool a100 must be a whole number from 0 to 2147483647"},
		// NUL and bytes that are not UTF-8 in JSON bodies.
		{"API key name NUL", "POST", "/api/v1/api-keys", jsonCT, `{"name":"a\u0000b","role":"viewer"}`, "name holds a NUL character"},
		{"API key name not UTF-8", "POST", "/api/v1/api-keys", jsonCT, "{\"name\":\"a\xffb\",\"role\":\"viewer\"}", "name is not valid UTF-8"},
		{"access rule subject NUL", "POST", "/api/v1/access-rules", jsonCT, `{"subjectType":"user","subject":"a\u0000","role":"viewer"}`, "subject holds a NUL character"},
		{"access rule subject not UTF-8", "POST", "/api/v1/access-rules", jsonCT, "{\"subjectType\":\"group\",\"subject\":\"\xc3\x28\",\"role\":\"viewer\"}", "subject is not valid UTF-8"},
		{"project name NUL", "PUT", project, jsonCT, `{"name":"a\u0000"}`, "name holds a NUL character"},
		{"namespace NUL", "PUT", project, jsonCT, `{"namespaces":["team-alpha","b\u0000"]}`, "namespaces[1] holds a NUL character"},
		{"minPriority not UTF-8", "PUT", project, jsonCT, "{\"policy\":{\"minPriority\":\"\xfe\"}}", "policy.minPriority is not valid UTF-8"},
		{"quota pool name NUL", "PUT", project + "/resources", jsonCT, `[{"nodePool":{"name":"a\u0000"},"gpu":{"deserved":1}}]`, "resources[0].nodePool.name holds a NUL character"},
		{"node pool label NUL", "PUT", "/api/v1/node-pools/" + f.pool, jsonCT, `{"labelValue":"x\u0000"}`, "labelValue holds a NUL character"},
		{"department name NUL", "POST", "/api/v1/org-unit/departments", jsonCT, `{"name":"\u0000"}`, "name holds a NUL character"},
		{"NUL in a key", "PUT", project, jsonCT, `{"na\u0000me":"x"}`, "a field name in the request body holds a NUL character"},
		// Over-long text.
		{"API key name 201 characters", "POST", "/api/v1/api-keys", jsonCT, `{"name":"` + long(201) + `","role":"viewer"}`, "name is 201 characters long; the limit is 200"},
		{"access rule subject 501 characters", "POST", "/api/v1/access-rules", jsonCT, `{"subjectType":"group","subject":"` + long(501) + `","role":"viewer"}`, "subject is 501 characters long; the limit is 500"},
		{"JSON string over 16 KiB", "PUT", project, jsonCT, `{"name":"` + strings.Repeat("a", 16<<10+1) + `"}`, "name is 16385 bytes long; the limit is 16384"},
		// NUL and bytes that are not UTF-8 in forms (sign-in is reachable without signing in).
		{"sign-in username NUL", "POST", "/login", formCT, "username=a%00&password=x", `form field "username" holds a NUL character`},
		{"sign-in username not UTF-8", "POST", "/login", formCT, "username=a%ff&password=x", `form field "username" is not valid UTF-8`},
		{"sign-in username 201 characters", "POST", "/login", formCT, "username=" + long(201) + "&password=x", `form field "username" is 201 characters long; the limit is 200`},
		{"form API key name NUL", "POST", "/access/keys", formCT, "name=a%00&role=viewer", `form field "name" holds a NUL character`},
		{"form API key name 201 characters", "POST", "/access/keys", formCT, "name=" + long(201) + "&role=viewer", "name is 201 characters long; the limit is 200"},
		{"form rule subject not UTF-8", "POST", "/access/rules", formCT, "subjectType=user&subject=%ff&role=viewer", `form field "subject" is not valid UTF-8`},
		{"form rule subject 501 characters", "POST", "/access/rules", formCT, "subjectType=user&subject=" + long(501) + "&role=viewer", "subject is 501 characters long; the limit is 500"},
		{"form project name NUL", "POST", "/projects/" + f.proj, formCT, "name=al%00pha&departmentId=" + f.dept, `form field "name" holds a NUL character`},
		{"form bad escape", "POST", "/projects/" + f.proj, formCT, "name=%zz", "the form is not valid"},
		// Query strings: NUL, not UTF-8, out of range, a ';'.
		{"search NUL", "GET", "/api/v1/org-unit/projects?search=a%00b", "", "", `query parameter "search" holds a NUL character`},
		{"search not UTF-8", "GET", "/api/v1/org-unit/departments?search=%ff", "", "", `query parameter "search" is not valid UTF-8`},
		{"filterBy value NUL", "GET", "/api/v1/node-pools?filterBy=name==a%00", "", "", `query parameter "filterBy" holds a NUL character`},
		{"event history filter NUL", "GET", "/event-history?subject=%00", "", "", `query parameter "subject" holds a NUL character`},
		{"audit log filter not UTF-8", "GET", "/api/v1/audit/log?filterBy=subject=@%C3%28", "", "", `query parameter "filterBy" is not valid UTF-8`},
		{"page search NUL", "GET", "/projects?search=%00", "", "", `query parameter "search" holds a NUL character`},
		{"integer filter beyond the column", "GET", "/api/v1/workload-priorities?filterBy=value==99999999999", "", "", `for field "value" must be a whole number from -2147483648 to 2147483647`},
		{"path NUL", "DELETE", "/api/v1/access-rules/%00", "", "", "the path holds a NUL character"},
		{"semicolon", "GET", "/api/v1/org-unit/projects?sortBy=name;drop", "", "", "the query string holds ';'"},
		{"semicolon in a page", "GET", "/projects?sortBy=name;x=1", "", "", "the query string holds ';'"},
		{"semicolon on a change", "PUT", project + "?a=1;b=2", jsonCT, `{"name":"x"}`, "the query string holds ';'"},
		{"bad escape in a query", "GET", "/api/v1/node-pools?search=%zz", "", "", "the query string is not valid"},
		// JSON keys given twice or spelled in another case; wrong kinds named sensibly.
		{"duplicate key", "PUT", project, jsonCT, `{"name":"a","name":"b"}`, `field "name" appears more than once`},
		{"duplicate nested key", "PUT", project, jsonCT, `{"policy":{"queueing":"strict","queueing":"best-effort"}}`, `field "policy.queueing" appears more than once`},
		{"duplicate key in a quota", "PUT", project + "/resources", jsonCT, `[{"nodePool":{"name":"a100"},"gpu":{"deserved":1,"deserved":2}}]`, `field "resources[0].gpu.deserved" appears more than once`},
		{"key in another case", "PUT", project, jsonCT, `{"Policy":{"queueing":"strict"}}`, `unknown field "Policy"; field names are case-sensitive: did you mean "policy"?`},
		{"nested key in another case", "PUT", project, jsonCT, `{"policy":{"Queueing":"strict"}}`, `unknown field "policy.Queueing"; field names are case-sensitive: did you mean "queueing"?`},
		{"API key field in another case", "POST", "/api/v1/api-keys", jsonCT, `{"NAME":"x","role":"viewer"}`, `did you mean "name"?`},
		{"string for an array", "PUT", project, jsonCT, `{"namespaces":"team-alpha"}`, "namespaces must be an array, not a string"},
		{"number for a time", "POST", "/api/v1/api-keys", jsonCT, `{"name":"x","role":"viewer","expiresAt":5}`, "expiresAt must be an RFC 3339 time"},
		{"text for a time", "POST", "/api/v1/api-keys", jsonCT, `{"name":"x","role":"viewer","expiresAt":"tomorrow"}`, "expiresAt must be an RFC 3339 time"},
	}
}

// TestBadInputIs400NamingTheFieldAndWritesNothing posts every case of badInputCases: each is a
// 400 whose sentence names the field (and its range), and no configuration row or successful
// audit row changes.
func TestBadInputIs400NamingTheFieldAndWritesNothing(t *testing.T) {
	t.Parallel()
	f := newInputFixture(t)
	for _, tc := range badInputCases(f) {
		before := snapshot(t, f.db)
		r := do(t, f.srv, tc.method, tc.path, tc.contentType, tc.body)
		body := html.UnescapeString(string(r.body)) // a page
		if strings.HasPrefix(r.header.Get("Content-Type"), jsonCT) {
			body = r.refusal(t).Message
		}
		if r.status != http.StatusBadRequest || !strings.Contains(body, tc.mention) {
			t.Errorf("%s: %s %s = %d, want 400 saying %q: %.400s", tc.name, tc.method, tc.path, r.status, tc.mention, body)
		}
		if after := snapshot(t, f.db); after != before {
			t.Errorf("%s: the request changed the database:\nbefore %s\nafter  %s", tc.name, before, after)
		}
	}
}

// TestXRequestIDMustBePrintable: audit rows carry the caller's X-Request-Id, so a change sent
// with one that is not UTF-8 used to fail writing its audit row (500). It is a 400 now, and the
// answer carries an id of Arbiter's own.
func TestXRequestIDMustBePrintable(t *testing.T) {
	t.Parallel()
	f := newInputFixture(t)
	before := snapshot(t, f.db)
	for _, id := range []string{"\xff\xfe", strings.Repeat("x", 201)} {
		req, _ := http.NewRequest("PUT", f.srv.URL+"/api/v1/org-unit/projects/"+f.proj, strings.NewReader(`{"policy":{"queueing":"strict"}}`))
		req.Header.Set("Content-Type", jsonCT)
		req.Header.Set("Authorization", "Bearer "+f.token)
		req.Header.Set("X-Request-Id", id)
		res, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || res.Header.Get("X-Request-Id") == id {
			t.Errorf("X-Request-Id %q: %d, answer's id %q; want 400 and an id of Arbiter's", id, res.StatusCode, res.Header.Get("X-Request-Id"))
		}
	}
	if after := snapshot(t, f.db); after != before {
		t.Errorf("a refused request changed the database")
	}
	// A printable id of the caller's is kept and the change is made.
	req, _ := http.NewRequest("PUT", f.srv.URL+"/api/v1/org-unit/projects/"+f.proj, strings.NewReader(`{"policy":{"queueing":"strict"}}`))
	req.Header.Set("Content-Type", jsonCT)
	req.Header.Set("Authorization", "Bearer "+f.token)
	req.Header.Set("X-Request-Id", "trace-42")
	res, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("X-Request-Id") != "trace-42" {
		t.Errorf("X-Request-Id trace-42: %d, id %q", res.StatusCode, res.Header.Get("X-Request-Id"))
	}
}
