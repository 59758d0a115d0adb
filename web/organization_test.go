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
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"
)

// orgAPI creates pool a100, department research (16 deserved GPUs in a100) and project
// alpha (10 deserved, limit 12, namespace team-alpha).
func orgAPI(t *testing.T) (srv *httptest.Server, st *store.Store, pool, dept, proj string) {
	t.Helper()
	srv, st = newAPI(t)
	pool = create(t, srv, "/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool"}`)
	dept = create(t, srv, "/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":16}}]}`)
	proj = create(t, srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":"alpha","departmentId":%q,"namespaces":["team-alpha"],
		"resources":[{"nodePool":{"id":%q},"gpu":{"deserved":10,"limit":12,"overQuotaWeight":3}}]}`, dept, pool))
	return
}

// defaultPolicy is a project's policy when none is set (docs/organization.md "Policy (projects)").
var defaultPolicy = views.Policy{AllowPriorityChange: true, AllowPreemptibilityChange: true, PreemptionOrder: "oldest", PreemptionMode: "terminate", Queueing: "best-effort",
	PriorityPolicy: "fence"}

func TestOrganizationRoutes(t *testing.T) {
	t.Parallel()
	srv, _, pool, dept, proj := orgAPI(t)
	a100Ref, defRef := views.NodePoolRef{ID: pool, Name: "a100"}, views.NodePoolRef{ID: store.DefaultNodePoolID.String(), Name: "default"}

	// Node pools: the seeded default and a100, with status present and zero.
	a100 := views.NodePool{ID: pool, Name: "a100", LabelKey: "arbiter.dev/node-pool", LabelValue: "a100", Placement: "binpack"}
	def := views.NodePool{ID: defRef.ID, Name: "default", LabelKey: "arbiter.dev/node-pool", LabelValue: "default", Placement: "binpack", Default: true}
	if diff := cmp.Diff([]views.NodePool{a100, def}, arbiterPools(list[views.NodePoolAnswer](t, srv, "/api/v1/node-pools", "nodePools")), stamps); diff != "" {
		t.Fatalf("node pools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(def, arbiterPool(getAs[views.NodePoolAnswer](t, srv, "/api/v1/node-pools/"+def.ID)), stamps); diff != "" {
		t.Errorf("default pool (-want +got):\n%s", diff)
	}
	a100.Placement, a100.LabelValue = "spread", "gpu-a100"
	if diff := cmp.Diff(a100, arbiterPool(sendAs[views.NodePoolAnswer](t, srv, "PUT", "/api/v1/node-pools/"+pool, `{"placement":"spread","labelValue":"gpu-a100"}`, 200)), stamps); diff != "" {
		t.Errorf("PUT node pool (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]views.NodePool{a100}, arbiterPools(list[views.NodePoolAnswer](t, srv, "/api/v1/node-pools?filterBy=placement==spread", "nodePools")), stamps); diff != "" {
		t.Errorf("filterBy placement (-want +got):\n%s", diff)
	}

	// Departments: a quota's limit and weight default to -1 (none) and 2.
	cluster := store.SeedID("cluster", "arbiter").String()
	research := views.Department{ID: dept, Name: "research", ProjectCount: 1, PriorityPolicy: "fence",
		Resources: []views.Quota{{NodePool: a100Ref, GPU: views.QuotaGPU{Deserved: 16, Limit: -1, OverQuotaWeight: 2}}},
		Status:    views.OrgStatus{NodePools: []views.PoolUsage{{NodePool: a100Ref}}},
		// Run:ai's fields: the one cluster, the deserved GPUs summed.
		RunAIOrgUnit: views.RunAIOrgUnit{ClusterID: cluster, TotalResources: views.TotalResources{GPUQuota: 16}}}
	if diff := cmp.Diff(research, getAs[views.Department](t, srv, "/api/v1/org-unit/departments/"+dept), stamps); diff != "" {
		t.Fatalf("department (-want +got):\n%s", diff)
	}
	send(t, srv, "PUT", "/api/v1/org-unit/departments/"+dept, `{"name":"science"}`, 200)
	research.Name = "science" // a rename keeps the quotas
	if diff := cmp.Diff([]views.Department{research}, list[views.Department](t, srv, "/api/v1/org-unit/departments?filterBy=name=^sci", "departments"), stamps); diff != "" {
		t.Errorf("renamed department (-want +got):\n%s", diff)
	}

	// Projects.
	alpha := views.Project{ID: proj, Name: "alpha", DepartmentID: dept, DepartmentName: "science", Namespaces: []string{"team-alpha"},
		EffectiveNodePools: []views.NodePoolRef{a100Ref, defRef}, Policy: defaultPolicy,
		Resources: []views.Quota{{NodePool: a100Ref, GPU: views.QuotaGPU{Deserved: 10, Limit: 12, OverQuotaWeight: 3}}},
		Status:    views.OrgStatus{NodePools: []views.PoolUsage{{NodePool: a100Ref}}},
		// Run:ai's fields: the department as parent, the pools tried by name.
		RunAIOrgUnit: views.RunAIOrgUnit{ClusterID: cluster, TotalResources: views.TotalResources{GPUQuota: 10}},
		ParentID:     dept, EnforceRunaiScheduler: true, Effective: views.ProjectEffective{DefaultNodePools: []string{"a100", "default"}}}
	if diff := cmp.Diff(alpha, getAs[views.Project](t, srv, "/api/v1/org-unit/projects/"+proj), stamps); diff != "" {
		t.Errorf("project (-want +got):\n%s", diff)
	}
	high := store.SeedID("priority", "high").String()
	got := sendAs[views.Project](t, srv, "PUT", "/api/v1/org-unit/projects/"+proj, `{"policy":{"defaultPriorityId":"`+high+`","minPriority":"low","maxPriority":"very-high","queueing":"strict","minRuntimeSeconds":300},
		"nodePools":["`+defRef.ID+`","`+pool+`"],"namespaces":["team-alpha","alpha-batch"]}`, 200)
	changed := alpha
	changed.Policy = views.Policy{DefaultPriorityID: &high, AllowPriorityChange: true, AllowPreemptibilityChange: true, MinPriority: ptr.To("low"), MaxPriority: ptr.To("very-high"),
		PreemptionOrder: "oldest", PreemptionMode: "terminate", MinRuntimeSeconds: 300, Queueing: "strict", PriorityPolicy: "fence"}
	changed.NodePools, changed.EffectiveNodePools = []string{defRef.ID, pool}, []views.NodePoolRef{defRef, a100Ref}
	changed.Effective.DefaultNodePools = []string{"default", "a100"}
	changed.Namespaces = []string{"alpha-batch", "team-alpha"}
	if diff := cmp.Diff(changed, got, stamps); diff != "" {
		t.Errorf("project after PUT (-want +got):\n%s", diff)
	}
	// null returns the policy and the node pool order to their defaults.
	got = sendAs[views.Project](t, srv, "PUT", "/api/v1/org-unit/projects/"+proj, `{"policy":null,"nodePools":null}`, 200)
	alpha.Namespaces = changed.Namespaces
	if diff := cmp.Diff(alpha, got, stamps); diff != "" {
		t.Errorf("null policy and order (-want +got):\n%s", diff)
	}
	// PUT resources answers the quotas as they now are, as Run:ai does.
	quotas := sendAs[[]views.Quota](t, srv, "PUT", "/api/v1/org-unit/projects/"+proj+"/resources", `[{"nodePool":{"name":"a100"},"gpu":{"deserved":16,"limit":-1}},{"nodePool":{"name":"default"}}]`, 200)
	alpha.Resources = []views.Quota{
		{NodePool: a100Ref, GPU: views.QuotaGPU{Deserved: 16, Limit: -1, OverQuotaWeight: 2}},
		{NodePool: defRef, GPU: views.QuotaGPU{Deserved: 0, Limit: -1, OverQuotaWeight: 2}},
	}
	alpha.Status.NodePools = []views.PoolUsage{{NodePool: a100Ref}, {NodePool: defRef}}
	alpha.TotalResources.GPUQuota = 16
	if diff := cmp.Diff(alpha.Resources, quotas); diff != "" {
		t.Errorf("PUT resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(alpha, getAs[views.Project](t, srv, "/api/v1/org-unit/projects/"+proj), stamps); diff != "" {
		t.Errorf("the project after PUT resources (-want +got):\n%s", diff)
	}
	projects := getList[views.Project](t, srv, "/api/v1/org-unit/projects?filterBy=departmentName==science,namespaces=@batch", "projects")
	if diff := cmp.Diff(listed[views.Project]{Items: []views.Project{alpha}}, projects, stamps); diff != "" {
		t.Errorf("project list (-want +got):\n%s", diff)
	}

	// Deletes, in the order the rules allow.
	send(t, srv, "DELETE", "/api/v1/org-unit/projects/"+proj, "", 204)
	send(t, srv, "GET", "/api/v1/org-unit/projects/"+proj, "", 404)
	send(t, srv, "PUT", "/api/v1/org-unit/departments/"+dept, `{"resources":[]}`, 200)
	send(t, srv, "DELETE", "/api/v1/org-unit/departments/"+dept, "", 204)
	send(t, srv, "DELETE", "/api/v1/node-pools/"+pool, "", 204)
	if diff := cmp.Diff([]views.NodePool{def}, arbiterPools(list[views.NodePoolAnswer](t, srv, "/api/v1/node-pools", "nodePools")), stamps); diff != "" {
		t.Errorf("after deletes (-want +got):\n%s", diff)
	}
}

func TestProjectsArePaged(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	dept := create(t, srv, "/api/v1/org-unit/departments", `{"name":"d"}`)
	for i := range 3 {
		create(t, srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":"p%d","departmentId":%q}`, i, dept))
	}
	// A page is its project names and the next page's offset (null on the last page).
	type page struct {
		Names string
		Next  *int
	}
	pageAt := func(path string) page {
		l := getList[views.Project](t, srv, path, "projects")
		return page{namesOf(l.Items, func(p views.Project) string { return p.Name }), l.Next}
	}
	if diff := cmp.Diff(page{"p0,p1", ptr.To(2)}, pageAt("/api/v1/org-unit/projects?limit=2")); diff != "" {
		t.Fatalf("first page (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(page{"p2", nil}, pageAt("/api/v1/org-unit/projects?limit=2&offset=2")); diff != "" {
		t.Errorf("second page (-want +got):\n%s", diff)
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
	// What the refusals below must leave as it is.
	before := getAs[views.Project](t, srv, projects+"/"+proj)
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
		{"bad priority policy", "PUT", projects + "/" + proj, `{"policy":{"priorityPolicy":"global"}}`, 400, `priorityPolicy "global" is not valid`},
		{"priority offset beyond int32", "PUT", projects + "/" + proj, `{"policy":{"priorityOffset":2147483648}}`, 400, "policy.priorityOffset must be a whole number from -2147483648 to 2147483647"},
		{"negative preemption delay", "PUT", projects + "/" + proj, `{"policy":{"preemptionDelaySeconds":-1}}`, 400, "policy.preemptionDelaySeconds must be a whole number from 0"},
		{"negative reclaim minimum runtime", "PUT", projects + "/" + proj, `{"policy":{"reclaimMinRuntimeSeconds":-1}}`, 400, "policy.reclaimMinRuntimeSeconds must be a whole number from 0"},
		{"bad department priority policy", "PUT", departments + "/" + dept, `{"priorityPolicy":"default"}`, 400, `priorityPolicy "default" is not valid`},
		{"unknown policy field", "PUT", projects + "/" + proj, `{"policy":{"priority":"high"}}`, 400, `"priority"`},
		{"unknown node pool in the order", "PUT", projects + "/" + proj, `{"nodePools":["` + missing + `"]}`, 400, missing},
		{"node pool twice in the order", "PUT", projects + "/" + proj, `{"nodePools":["` + def + `","` + def + `"]}`, 400, "more than once"},
		{"unknown project field", "PUT", projects + "/" + proj, `{"queue":"x"}`, 400, `"queue"`},
		{"delete a department with projects", "DELETE", departments + "/" + dept, "", 409, "department research has 1 project (alpha)"},
		{"delete the default pool", "DELETE", pools + "/" + def, "", 400, "default node pool cannot be deleted"},
		{"delete a pool quotas use", "DELETE", pools + "/" + pool, "", 409, "node pool a100 is in the quotas of department research, project alpha"},
		{"rename the default pool", "PUT", pools + "/" + def, `{"name":"other"}`, 400, "cannot be renamed"},
		{"label the default pool", "PUT", pools + "/" + def, `{"labelKey":"x"}`, 400, "default node pool stay arbiter.dev/node-pool=default"},
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
			if e := r.refusal(t); !strings.Contains(e.Message, tc.mentions) || e.Code != tc.status {
				t.Errorf("answer %+v does not mention %q", e, tc.mentions)
			}
		})
	}
	// Nothing refused was written: alpha is as created, to the time of its last change.
	if diff := cmp.Diff(before, getAs[views.Project](t, srv, projects+"/"+proj)); diff != "" {
		t.Errorf("after refused changes the project differs (-before +after):\n%s", diff)
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
	create(t, srv, "/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool"}`)
	dept := create(t, srv, "/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":4}}]}`)
	proj := create(t, srv, "/api/v1/org-unit/projects", `{"name":"alpha","departmentId":"`+dept+`"}`)
	send(t, srv, "PUT", "/api/v1/org-unit/projects/"+proj+"/resources", `[{"nodePool":{"name":"a100"},"gpu":{"deserved":4,"limit":6}}]`, 200)
	if strings.Join(heard, ",") != "node_pools,departments,projects,projects" {
		t.Errorf("heard %v", heard)
	}
	entries, err := st.AuditEntries(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := store.AuditEntry{Action: "update", HTTPMethod: "PUT", EntityType: "project", EntityID: proj, EntityName: "alpha", Result: "success", HTTPStatus: 200,
		Changes: map[string]any{
			"resources": map[string]any{"from": "", "to": "a100: deserved 4, limit 6, weight 2"},
			"nodePools": map[string]any{"from": "default", "to": "a100,default"}, // the effective order: pools with quota first
		}}
	if diff := cmp.Diff(want, entries[0], cmpopts.IgnoreFields(store.AuditEntry{}, "ID", "At", "Subject", "SubjectType", "SourceIP", "RequestID")); diff != "" {
		t.Errorf("audit row (-want +got):\n%s", diff)
	}
	if entries[0].RequestID == "" {
		t.Error("the audit row has no request id")
	}
}

func TestOrganizationPages(t *testing.T) {
	t.Parallel()
	srv, _, pool, _, proj := orgAPI(t)
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
	form := "application/x-www-form-urlencoded"
	if r := do(t, srv, "POST", "/projects/"+proj+"/quotas/"+pool, form, "deserved=12&limit=&weight=3"); r.status != 200 || !strings.Contains(string(r.body), `value="12"`) {
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
