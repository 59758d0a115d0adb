package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/store"
)

// sendMap sends JSON and fails unless the status is want; it returns the answer's object.
func sendMap(t *testing.T, srv *httptest.Server, method, path, body string, want int) map[string]any {
	t.Helper()
	r := do(t, srv, method, path, "application/json", body)
	if r.status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, r.status, want, r.body)
	}
	if len(r.body) == 0 {
		return nil
	}
	return r.json(t)
}

// orgAPI creates pool a100, department research (16 deserved GPUs in a100) and project
// alpha (10 deserved, limit 12, namespace team-alpha).
func orgAPI(t *testing.T) (srv *httptest.Server, st *store.Store, pool, dept, proj string) {
	t.Helper()
	srv, st = newAPI(t)
	pool = sendMap(t, srv, "POST", "/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool"}`, 201)["id"].(string)
	dept = sendMap(t, srv, "POST", "/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":16}}]}`, 201)["id"].(string)
	proj = sendMap(t, srv, "POST", "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":"alpha","departmentId":%q,"namespaces":["team-alpha"],
		"resources":[{"nodePool":{"id":%q},"gpu":{"deserved":10,"limit":12,"overQuotaWeight":3}}]}`, dept, pool), 201)["id"].(string)
	return
}

func TestOrganizationRoutes(t *testing.T) {
	t.Parallel()
	srv, _, pool, dept, proj := orgAPI(t)

	// Node pools: the seeded default and a100, with status present and zero.
	pools := items(getJSON(t, srv, "/api/v1/node-pools"), "nodePools")
	if len(pools) != 2 || pools[0]["name"] != "a100" || pools[1]["name"] != "default" {
		t.Fatalf("node pools = %v", pools)
	}
	a100 := pools[0]
	if a100["labelKey"] != "arbiter.dev/node-pool" || a100["labelValue"] != "a100" || a100["placement"] != "binpack" || a100["default"] != false {
		t.Errorf("a100 = %v", a100)
	}
	if st, _ := a100["status"].(map[string]any); st == nil || st["nodes"] != float64(0) || st["allocatedGpus"] != float64(0) {
		t.Errorf("a100 status = %v, want zeros", a100["status"])
	}
	if got := getJSON(t, srv, "/api/v1/node-pools/"+store.DefaultNodePoolID.String()); got["name"] != "default" || got["default"] != true {
		t.Errorf("default pool = %v", got)
	}
	got := sendMap(t, srv, "PUT", "/api/v1/node-pools/"+pool, `{"placement":"spread","labelValue":"gpu-a100"}`, 200)
	if got["placement"] != "spread" || got["labelValue"] != "gpu-a100" || got["name"] != "a100" {
		t.Errorf("PUT node pool = %v", got)
	}
	if got := items(getJSON(t, srv, "/api/v1/node-pools?filterBy=placement==spread"), "nodePools"); len(got) != 1 || got[0]["name"] != "a100" {
		t.Errorf("filterBy placement = %v", got)
	}

	// Departments.
	d := getJSON(t, srv, "/api/v1/org-unit/departments/"+dept)
	res := items(d, "resources")
	if len(res) != 1 || res[0]["nodePool"].(map[string]any)["id"] != pool {
		t.Fatalf("department resources = %v", res)
	}
	if gpu := res[0]["gpu"].(map[string]any); gpu["deserved"] != float64(16) || gpu["limit"] != float64(-1) || gpu["overQuotaWeight"] != float64(2) {
		t.Errorf("department quota defaults = %v", gpu)
	}
	if st := d["status"].(map[string]any); st["allocated"] != float64(0) || len(st["nodePools"].([]any)) != 1 {
		t.Errorf("department status = %v", st)
	}
	if d["projectCount"] != float64(1) {
		t.Errorf("projectCount = %v", d["projectCount"])
	}
	sendMap(t, srv, "PUT", "/api/v1/org-unit/departments/"+dept, `{"name":"science"}`, 200)
	if got := items(getJSON(t, srv, "/api/v1/org-unit/departments?filterBy=name=^sci"), "departments"); len(got) != 1 || len(items(got[0], "resources")) != 1 {
		t.Errorf("rename kept the quotas? %v", got)
	}

	// Projects.
	p := getJSON(t, srv, "/api/v1/org-unit/projects/"+proj)
	if p["departmentId"] != dept || p["departmentName"] != "science" || fmt.Sprint(p["namespaces"]) != "[team-alpha]" || p["nodePools"] != nil {
		t.Errorf("project = %v", p)
	}
	if eff := items(p, "effectiveNodePools"); len(eff) != 2 || eff[0]["name"] != "a100" || eff[1]["name"] != "default" {
		t.Errorf("effectiveNodePools = %v", eff)
	}
	pol := p["policy"].(map[string]any)
	if pol["defaultPriorityId"] != nil || pol["allowPriorityChange"] != true || pol["minPriority"] != nil || pol["preemptionOrder"] != "oldest" ||
		pol["preemptionMode"] != "terminate" || pol["minRuntimeSeconds"] != float64(0) || pol["queueing"] != "best-effort" {
		t.Errorf("default policy = %v", pol)
	}
	high := store.SeedID("priority", "high").String()
	p = sendMap(t, srv, "PUT", "/api/v1/org-unit/projects/"+proj, `{"policy":{"defaultPriorityId":"`+high+`","minPriority":"low","maxPriority":"very-high","queueing":"strict","minRuntimeSeconds":300},
		"nodePools":["`+store.DefaultNodePoolID.String()+`","`+pool+`"],"namespaces":["team-alpha","alpha-batch"]}`, 200)
	pol = p["policy"].(map[string]any)
	if pol["defaultPriorityId"] != high || pol["maxPriority"] != "very-high" || pol["queueing"] != "strict" || pol["minRuntimeSeconds"] != float64(300) || pol["preemptionOrder"] != "oldest" {
		t.Errorf("policy after PUT = %v", pol)
	}
	if eff := items(p, "effectiveNodePools"); eff[0]["name"] != "default" || fmt.Sprint(p["namespaces"]) != "[alpha-batch team-alpha]" {
		t.Errorf("after PUT: order %v, namespaces %v", eff, p["namespaces"])
	}
	p = sendMap(t, srv, "PUT", "/api/v1/org-unit/projects/"+proj, `{"policy":null,"nodePools":null}`, 200)
	if pol = p["policy"].(map[string]any); pol["defaultPriorityId"] != nil || pol["queueing"] != "best-effort" || p["nodePools"] != nil {
		t.Errorf("null policy and order = %v / %v", pol, p["nodePools"])
	}
	p = sendMap(t, srv, "PUT", "/api/v1/org-unit/projects/"+proj+"/resources", `[{"nodePool":{"name":"a100"},"gpu":{"deserved":16,"limit":-1}},{"nodePool":{"name":"default"}}]`, 200)
	if res := items(p, "resources"); len(res) != 2 || res[0]["gpu"].(map[string]any)["deserved"] != float64(16) {
		t.Errorf("PUT resources = %v", res)
	}
	list := getJSON(t, srv, "/api/v1/org-unit/projects?filterBy=departmentName==science,namespaces=@batch")
	if got := items(list, "projects"); len(got) != 1 || list["next"] != nil {
		t.Errorf("project list = %v", list)
	}

	// Deletes, in the order the rules allow.
	sendMap(t, srv, "DELETE", "/api/v1/org-unit/projects/"+proj, "", 204)
	sendMap(t, srv, "GET", "/api/v1/org-unit/projects/"+proj, "", 404)
	sendMap(t, srv, "PUT", "/api/v1/org-unit/departments/"+dept, `{"resources":[]}`, 200)
	sendMap(t, srv, "DELETE", "/api/v1/org-unit/departments/"+dept, "", 204)
	sendMap(t, srv, "DELETE", "/api/v1/node-pools/"+pool, "", 204)
	if got := items(getJSON(t, srv, "/api/v1/node-pools"), "nodePools"); len(got) != 1 {
		t.Errorf("after deletes: %v", got)
	}
}

func TestProjectsArePaged(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	dept := sendMap(t, srv, "POST", "/api/v1/org-unit/departments", `{"name":"d"}`, 201)["id"].(string)
	for i := range 3 {
		sendMap(t, srv, "POST", "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":"p%d","departmentId":%q}`, i, dept), 201)
	}
	first := getJSON(t, srv, "/api/v1/org-unit/projects?limit=2")
	if len(items(first, "projects")) != 2 || first["next"] != float64(2) {
		t.Fatalf("first page = %v", first)
	}
	second := getJSON(t, srv, "/api/v1/org-unit/projects?limit=2&offset=2")
	if ps := items(second, "projects"); len(ps) != 1 || ps[0]["name"] != "p2" || second["next"] != nil {
		t.Errorf("second page = %v", second)
	}
}

// TestOrganizationValidation checks every rule of docs/organization.md "Rules and their answers" and the
// request rules, each answering with a sentence that says what is wrong and by how much.
func TestOrganizationValidation(t *testing.T) {
	t.Parallel()
	srv, st, pool, dept, proj := orgAPI(t)
	missing := "19fbd4e8-68ab-5c2c-8d95-d57e189f3180"
	def := store.DefaultNodePoolID.String()
	projects, departments, pools := "/api/v1/org-unit/projects", "/api/v1/org-unit/departments", "/api/v1/node-pools"
	cases := []struct {
		name, method, path, body string
		status                   int
		mentions                 string
	}{
		{"project deserved over the department's share", "POST", projects, `{"name":"beta","departmentId":"` + dept + `","resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":10}}]}`, 400,
			"department research has 16 deserved GPUs in pool a100; its projects would have 20, 4 more than it has"},
		{"project quota raised over the share", "PUT", projects + "/" + proj + "/resources", `[{"nodePool":{"id":"` + pool + `"},"gpu":{"deserved":17}}]`, 400,
			"department research has 16 deserved GPUs in pool a100; its projects would have 17, 1 more"},
		{"department lowered below its projects", "PUT", departments + "/" + dept, `{"resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":6}}]}`, 400,
			"department research would have 6 deserved GPUs in pool a100; its projects have 10, 4 more"},
		{"quota in a pool the department has none in", "PUT", projects + "/" + proj, `{"resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":1}}]}`, 400,
			"department research has 0 deserved GPUs in pool default"},
		{"limit below deserved", "PUT", projects + "/" + proj + "/resources", `[{"nodePool":{"name":"a100"},"gpu":{"deserved":8,"limit":4}}]`, 400,
			"limit 4 GPUs in pool a100 is below the deserved 8, by 4"},
		{"department limit below deserved", "PUT", departments + "/" + dept, `{"resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":16,"limit":10}}]}`, 400,
			"limit 10 GPUs in pool a100 is below the deserved 16, by 6"},
		{"negative deserved", "PUT", projects + "/" + proj + "/resources", `[{"nodePool":{"name":"a100"},"gpu":{"deserved":-2}}]`, 400, "resources[0].gpu.deserved must be a whole number from 0 to 2147483647, not -2"},
		{"negative weight", "PUT", projects + "/" + proj + "/resources", `[{"nodePool":{"name":"a100"},"gpu":{"deserved":1,"overQuotaWeight":-1}}]`, 400, "resources[0].gpu.overQuotaWeight must be a whole number from 0 to 2147483647, not -1"},
		{"limit below -1", "PUT", projects + "/" + proj + "/resources", `[{"nodePool":{"name":"a100"},"gpu":{"deserved":1,"limit":-3}}]`, 400, "resources[0].gpu.limit must be a whole number from -1 to 2147483647, not -3"},
		{"unknown pool in a quota", "PUT", projects + "/" + proj + "/resources", `[{"nodePool":{"id":"` + missing + `"},"gpu":{"deserved":1}}]`, 400, missing},
		{"pool id and name disagree", "PUT", projects + "/" + proj + "/resources", `[{"nodePool":{"id":"` + def + `","name":"a100"},"gpu":{"deserved":1}}]`, 400, "is pool default, not a100"},
		{"same pool twice", "PUT", projects + "/" + proj + "/resources", `[{"nodePool":{"name":"a100"}},{"nodePool":{"id":"` + pool + `"}}]`, 400, "more than once"},
		{"quota without a pool", "PUT", projects + "/" + proj + "/resources", `[{"gpu":{"deserved":1}}]`, 400, "nodePool.id or nodePool.name"},
		{"malformed pool id in a quota", "PUT", projects + "/" + proj + "/resources", `[{"nodePool":{"id":"a100"}}]`, 400, `nodePool.id "a100"`},
		{"resources not an array", "PUT", projects + "/" + proj + "/resources", `{"nodePool":{"name":"a100"}}`, 400, "JSON array"},
		{"unknown field in a quota", "PUT", projects + "/" + proj + "/resources", `[{"nodePool":{"name":"a100"},"gpu":{"cpu":2}}]`, 400, `"cpu"`},
		{"string for a number", "PUT", projects + "/" + proj + "/resources", `[{"nodePool":{"name":"a100"},"gpu":{"deserved":"2"}}]`, 400, "deserved"},
		{"namespace owned by another project", "POST", projects, `{"name":"beta","departmentId":"` + dept + `","namespaces":["team-alpha"]}`, 409,
			"namespace team-alpha already belongs to project alpha"},
		{"invalid namespace", "PUT", projects + "/" + proj, `{"namespaces":["Team_Alpha"]}`, 400, `"Team_Alpha" is not a valid Kubernetes namespace name`},
		{"namespace twice", "PUT", projects + "/" + proj, `{"namespaces":["a","a"]}`, 400, "more than once"},
		{"duplicate project name", "POST", projects, `{"name":"alpha","departmentId":"` + dept + `"}`, 409, "a project named alpha already exists"},
		{"invalid project name", "POST", projects, `{"name":"Alpha Team","departmentId":"` + dept + `"}`, 400, `"Alpha Team"`},
		{"project without department", "POST", projects, `{"name":"beta"}`, 400, "departmentId"},
		{"project with unknown department", "POST", projects, `{"name":"beta","departmentId":"` + missing + `"}`, 400, missing},
		{"project department null", "PUT", projects + "/" + proj, `{"departmentId":null}`, 400, "departmentId cannot be null"},
		{"unknown priority name in policy", "PUT", projects + "/" + proj, `{"policy":{"minPriority":"urgent"}}`, 400, `minPriority "urgent" is not in the priority dictionary; use one of: very-low, low`},
		{"unknown default priority id", "PUT", projects + "/" + proj, `{"policy":{"defaultPriorityId":"` + missing + `"}}`, 400, missing},
		{"malformed default priority id", "PUT", projects + "/" + proj, `{"policy":{"defaultPriorityId":"high"}}`, 400, "policy.defaultPriorityId"},
		{"min above max", "PUT", projects + "/" + proj, `{"policy":{"minPriority":"high","maxPriority":"low"}}`, 400, "minPriority high (125) is above maxPriority low (40)"},
		{"bad preemption order", "PUT", projects + "/" + proj, `{"policy":{"preemptionOrder":"random"}}`, 400, `"random"`},
		{"bad preemption mode", "PUT", projects + "/" + proj, `{"policy":{"preemptionMode":"pause"}}`, 400, `"pause"`},
		{"bad queueing", "PUT", projects + "/" + proj, `{"policy":{"queueing":"fifo"}}`, 400, `"fifo"`},
		{"negative minimum runtime", "PUT", projects + "/" + proj, `{"policy":{"minRuntimeSeconds":-5}}`, 400, "policy.minRuntimeSeconds must be a whole number from 0 to 2147483647, not -5"},
		{"unknown policy field", "PUT", projects + "/" + proj, `{"policy":{"priority":"high"}}`, 400, `"priority"`},
		{"unknown node pool in the order", "PUT", projects + "/" + proj, `{"nodePools":["` + missing + `"]}`, 400, missing},
		{"node pool twice in the order", "PUT", projects + "/" + proj, `{"nodePools":["` + def + `","` + def + `"]}`, 400, "more than once"},
		{"unknown project field", "PUT", projects + "/" + proj, `{"queue":"x"}`, 400, `"queue"`},
		{"delete a department with projects", "DELETE", departments + "/" + dept, "", 409, "department research has 1 project (alpha)"},
		{"delete the default pool", "DELETE", pools + "/" + def, "", 400, "default node pool cannot be deleted"},
		{"delete a pool quotas use", "DELETE", pools + "/" + pool, "", 409, "node pool a100 is in the quotas of department research, project alpha"},
		{"rename the default pool", "PUT", pools + "/" + def, `{"name":"other"}`, 400, "cannot be renamed"},
		{"label the default pool", "PUT", pools + "/" + def, `{"labelKey":"x"}`, 400, "default node pool selects no label"},
		{"pool without label", "POST", pools, `{"name":"h100"}`, 400, "labelKey"},
		{"pool with a bad label key", "POST", pools, `{"name":"h100","labelKey":"a b"}`, 400, `labelKey "a b"`},
		{"pool selecting another pool's nodes", "POST", pools, `{"name":"h100","labelKey":"arbiter.dev/node-pool","labelValue":"a100"}`, 409, "node pool a100 already selects the nodes labelled arbiter.dev/node-pool=a100"},
		{"duplicate pool name", "POST", pools, `{"name":"a100","labelKey":"other"}`, 409, "a node pool named a100 already exists"},
		{"bad placement", "PUT", pools + "/" + pool, `{"placement":"random"}`, 400, `placement "random"`},
		{"unknown field in a department quota", "PUT", departments + "/" + dept, `{"resources":[{"nodePool":{"name":"a100"},"gpu":{"deserve":1}}]}`, 400, `unknown field "deserve" in a quota`},
		{"duplicate department", "POST", departments, `{"name":"research"}`, 409, "a department named research already exists"},
		{"department without name", "POST", departments, `{}`, 400, "needs a name"},
		{"unknown department", "GET", departments + "/" + missing, "", 404, missing},
		{"unknown project", "PUT", projects + "/" + missing, `{}`, 404, missing},
		{"unknown pool", "DELETE", pools + "/" + missing, "", 404, missing},
		{"malformed id", "GET", projects + "/xyz", "", 400, "xyz"},
		{"unknown filter", "GET", projects + "?filterBy=colour==red", "", 400, "colour"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, srv, tc.method, tc.path, "application/json", tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			e := r.json(t)
			if msg, _ := e["message"].(string); !strings.Contains(msg, tc.mentions) || e["code"] != float64(tc.status) {
				t.Errorf("answer %v does not mention %q", e, tc.mentions)
			}
		})
	}
	// Nothing refused was written: alpha still has its quota and the rows are as created.
	p := getJSON(t, srv, projects+"/"+proj)
	if res := items(p, "resources"); len(res) != 1 || res[0]["gpu"].(map[string]any)["deserved"] != float64(10) || fmt.Sprint(p["namespaces"]) != "[team-alpha]" {
		t.Errorf("after refused changes the project is %v", p)
	}
	entries, err := st.AuditEntries(context.Background(), 200)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, e := range entries {
		if e.Result == "failure" {
			refused++
		}
	}
	if refused < 40 {
		t.Errorf("only %d refused attempts are in the audit log", refused)
	}
}

func TestOrganizationChangesAreAuditedAndAnnounced(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	var heard []string
	st.OnConfigChange(func(aggregate string) { heard = append(heard, aggregate) })
	sendMap(t, srv, "POST", "/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool"}`, 201)
	dept := sendMap(t, srv, "POST", "/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":4}}]}`, 201)["id"].(string)
	proj := sendMap(t, srv, "POST", "/api/v1/org-unit/projects", `{"name":"alpha","departmentId":"`+dept+`"}`, 201)["id"].(string)
	sendMap(t, srv, "PUT", "/api/v1/org-unit/projects/"+proj+"/resources", `[{"nodePool":{"name":"a100"},"gpu":{"deserved":4,"limit":6}}]`, 200)
	if strings.Join(heard, ",") != "node_pools,departments,projects,projects" {
		t.Errorf("heard %v", heard)
	}
	entries, err := st.AuditEntries(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	e := entries[0]
	if e.EntityType != "project" || e.EntityName != "alpha" || e.Action != "update" || e.Result != "success" || e.RequestID == "" {
		t.Errorf("audit row = %+v", e)
	}
	if c, _ := e.Changes["resources"].(map[string]any); c == nil || c["to"] != "a100: deserved 4, limit 6, weight 2" {
		t.Errorf("audit changes = %v", e.Changes)
	}
}

func TestOrganizationPages(t *testing.T) {
	t.Parallel()
	srv, _, _, _, proj := orgAPI(t)
	for path, want := range map[string]string{
		"/projects": "team-alpha", "/departments": "research", "/node-pools": "arbiter.dev/node-pool",
		"/projects.csv": "a100: deserved 10, limit 12, weight 3", "/departments.csv": "a100: deserved 16", "/node-pools.csv": "binpack",
	} {
		r := do(t, srv, "GET", path, "", "")
		if r.status != 200 || !strings.Contains(string(r.body), want) {
			t.Errorf("GET %s = %d, want it to show %q: %.300s", path, r.status, want, r.body)
		}
	}
	// Without JavaScript an inline form posts and redirects back, or shows the refusal.
	pools := items(getJSON(t, srv, "/api/v1/node-pools?filterBy=name==a100"), "nodePools")
	form := "application/x-www-form-urlencoded"
	if r := do(t, srv, "POST", "/projects/"+proj+"/quotas/"+pools[0]["id"].(string), form, "deserved=12&limit=&weight=3"); r.status != 200 || !strings.Contains(string(r.body), `value="12"`) {
		t.Errorf("a valid quota edit = %d, want the redirect back to the page showing it: %.300s", r.status, r.body)
	}
	r := do(t, srv, "POST", "/projects/"+proj+"/quotas/"+store.DefaultNodePoolID.String(), form, "deserved=1")
	if r.status != 400 || !strings.Contains(string(r.body), "department research has 0 deserved GPUs in pool default") {
		t.Errorf("an edit over the share = %d: %.300s", r.status, r.body)
	}
	// With htmx the answer is the row, the refusal next to the quota line.
	req, _ := http.NewRequest("POST", srv.URL+"/projects/"+proj+"/quotas/"+store.DefaultNodePoolID.String(), strings.NewReader("deserved=1"))
	req.Header.Set("Content-Type", form)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("Authorization", "Bearer "+tokenOf(srv))
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 400 || !strings.Contains(string(body), `id="project-`+proj+`"`) || !strings.Contains(string(body), "field-error") {
		t.Errorf("htmx edit over the share = %d: %.400s", res.StatusCode, body)
	}
}
