// Package conformance checks that the routes Arbiter shares with NVIDIA Run:ai's published
// control-plane API answer as Run:ai's own OpenAPI document says: a real Arbiter (server.Serve
// over PostgreSQL; without a cluster for the routes in checked, on a local control plane, one
// for the package, for the workload routes in checkedOnCluster) is given an organization,
// every shared route in checked and checkedOnCluster is
// called (reads and writes, by id and lists with filterBy, sortBy, offset and limit where the
// route has them), the test's requests are checked to be ones the document describes (the
// document's own example bodies where it has them), and each answer's status and body are
// validated against the document's schemas with kin-openapi. Arbiter's own fields beside
// Run:ai's are allowed where the schema allows additional properties.
//
// The document is not in the repository: testdata/runai-extract.json is the part of it the
// test needs, made by internal/extract (go generate) from shared/reference/runai-openapi.json
// beside the repository, and TestExtractIsCurrent checks it against the document when the
// document is there.
package conformance

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
)

// org is the organization the checks run against, made through Arbiter's own routes.
type org struct {
	poolID, departmentID, projectID                   string
	keyID, keySecret                                  string
	cluster                                           string // the one cluster's id, as the node pools answer it
	secondPoolID, secondDepartmentID, secondProjectID string // made and deleted by the write checks
}

// runAIUnit are the fields Run:ai requires on a department or project that Arbiter answers as
// constants or derives: the one cluster, the department as parent, the deserved GPUs summed,
// the node pools tried in order.
type runAIUnit struct {
	ClusterID             string
	ParentID              string
	EnforceRunaiScheduler bool
	TotalResources        struct{ GPUQuota float64 }
	Effective             struct{ DefaultNodePools []string }
}

// foreignClusterID is a cluster id that is not Arbiter's.
const foreignClusterID = "00000000-0000-4000-8000-000000000001"

// gpus is a resources list of deserved GPUs in one pool, as Run:ai's requests spell it.
func gpus(poolID string, deserved int) []any {
	return []any{map[string]any{"nodePool": map[string]any{"id": poolID}, "gpu": map[string]any{"deserved": deserved}}}
}

// clusterID is the one cluster's id as Arbiter's node pools answer it.
func (c *client) clusterID(t *testing.T, o *org) string {
	t.Helper()
	if o.cluster == "" {
		var pool struct{ ClusterID string }
		c.do(t, exchange{method: "GET", route: "/api/v1/node-pools/{nodepoolId}", params: map[string]string{"nodepoolId": o.poolID}, want: 200, out: &pool})
		if pool.ClusterID == "" {
			t.Fatal("the node pool has no clusterId")
		}
		o.cluster = pool.ClusterID
	}
	return o.cluster
}

// refusedNaming sends x, which must be refused, and checks that the refusal names valid.
func (c *client) refusedNaming(t *testing.T, x exchange, valid string) {
	t.Helper()
	got := c.do(t, x)
	if !strings.Contains(string(got), valid) {
		t.Errorf("the refusal of a foreign clusterId does not name the valid one, %s: %s", valid, got)
	}
}

// counted GETs a /count route with query and checks its count.
func counted(t *testing.T, c *client, route string, query url.Values, want int) {
	t.Helper()
	var got struct{ Count *int }
	c.do(t, exchange{method: "GET", route: route, query: query, want: 200, out: &got})
	if got.Count == nil {
		t.Errorf("%s?%s answers no count, want %d", route, query.Encode(), want)
	} else if *got.Count != want {
		t.Errorf("%s?%s counts %d, want %d", route, query.Encode(), *got.Count, want)
	}
}

// checked are the shared method+path pairs this test calls, each with its check, in the order
// they run (later checks read what earlier ones wrote).
var checked = []struct {
	route string
	check func(t *testing.T, c *client, o *org)
}{
	{"POST /api/v1/token", func(t *testing.T, c *client, o *org) {
		// The document's own example, with a real key's credentials in its fields.
		body := c.example(t, "POST", "/api/v1/token", "client_credentials")
		body["clientID"], body["clientSecret"] = o.keyID, o.keySecret
		var tok struct{ AccessToken string }
		c.do(t, exchange{method: "POST", route: "/api/v1/token", body: body, want: 200, out: &tok})
		if tok.AccessToken == "" {
			t.Error("the token answer has no accessToken")
		}
	}},
	{"POST /api/v2/token", func(t *testing.T, c *client, o *org) {
		ex := c.example(t, "POST", "/api/v2/token", "client_credentials")
		form := url.Values{}
		for k, v := range ex {
			form.Set(k, v.(string))
		}
		form.Set("client_id", o.keyID)
		form.Set("client_secret", o.keySecret)
		c.do(t, exchange{method: "POST", route: "/api/v2/token", body: form, want: 200})
	}},
	{"GET /api/v1/workload-priorities", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "GET", route: "/api/v1/workload-priorities", want: 200})
		c.do(t, exchange{method: "GET", route: "/api/v1/workload-priorities", query: url.Values{"sortBy": {"name"}, "sortOrder": {"desc"}}, want: 200})
		var high struct{ Priorities []struct{ Name string } }
		c.do(t, exchange{method: "GET", route: "/api/v1/workload-priorities", query: url.Values{"filterBy": {"name==high"}}, want: 200, out: &high})
		if len(high.Priorities) != 1 || high.Priorities[0].Name != "high" {
			t.Errorf("priorities filtered by name==high are %v", high.Priorities)
		}
	}},
	{"GET /api/v1/workload-categories", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "GET", route: "/api/v1/workload-categories", want: 200})
	}},
	{"GET /api/v1/workload-categories/{categoryId}", func(t *testing.T, c *client, o *org) {
		var list struct{ Categories []struct{ ID string } }
		c.do(t, exchange{method: "GET", route: "/api/v1/workload-categories", want: 200, out: &list})
		if len(list.Categories) == 0 {
			t.Fatal("no workload categories")
		}
		for _, cat := range list.Categories {
			c.do(t, exchange{method: "GET", route: "/api/v1/workload-categories/{categoryId}", params: map[string]string{"categoryId": cat.ID}, want: 200})
		}
	}},
	{"GET /api/v1/workload-types", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "GET", route: "/api/v1/workload-types", want: 200})
		var pytorch struct{ Types []struct{ Name string } }
		c.do(t, exchange{method: "GET", route: "/api/v1/workload-types", query: url.Values{"filterBy": {"name==PyTorchJob"}}, want: 200, out: &pytorch})
		if len(pytorch.Types) != 1 || pytorch.Types[0].Name != "PyTorchJob" {
			t.Errorf("workload types filtered by name==PyTorchJob are %v", pytorch.Types)
		}
	}},
	{"GET /api/v1/workload-types/{workloadTypeId}", func(t *testing.T, c *client, o *org) {
		var list struct{ Types []struct{ ID string } }
		c.do(t, exchange{method: "GET", route: "/api/v1/workload-types", want: 200, out: &list})
		for _, ty := range list.Types {
			c.do(t, exchange{method: "GET", route: "/api/v1/workload-types/{workloadTypeId}", params: map[string]string{"workloadTypeId": ty.ID}, want: 200})
		}
	}},
	{"PUT /api/v1/workload-types/{workloadTypeId}", func(t *testing.T, c *client, o *org) {
		var types struct {
			Types []struct{ ID, Name, CategoryID string }
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/workload-types", want: 200, out: &types})
		var prios struct{ Priorities []struct{ ID, Name string } }
		c.do(t, exchange{method: "GET", route: "/api/v1/workload-priorities", want: 200, out: &prios})
		if len(types.Types) == 0 || len(prios.Priorities) == 0 {
			t.Fatal("no workload types or priorities")
		}
		ty, prio := types.Types[0], prios.Priorities[0]
		var got struct{ PriorityID, PriorityName string }
		c.do(t, exchange{method: "PUT", route: "/api/v1/workload-types/{workloadTypeId}", params: map[string]string{"workloadTypeId": ty.ID},
			body: map[string]any{"priorityId": prio.ID, "categoryId": ty.CategoryID}, want: 200, out: &got})
		if diff := cmp.Diff(struct{ PriorityID, PriorityName string }{prio.ID, prio.Name}, got); diff != "" {
			t.Errorf("after the change the workload type's priority is not the one set (-want +got):\n%s", diff)
		}
	}},
	{"GET /api/v1/audit/log", func(t *testing.T, c *client, o *org) {
		now := time.Now().UTC()
		span := url.Values{"start": {now.Add(-time.Hour).Format(time.RFC3339)}, "end": {now.Add(time.Minute).Format(time.RFC3339)}}
		var log struct {
			Logs []struct {
				Subject string
			}
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/audit/log", query: span, want: 200, out: &log})
		if len(log.Logs) == 0 {
			t.Error("the audit log lists nothing under logs")
		}
		q := url.Values{"offset": {"0"}, "numberOfSamples": {"5"}, "sortBy": {"timestamp"}, "sortOrder": {"desc"}}
		for k, v := range span {
			q[k] = v
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/audit/log", query: q, want: 200})
		// Filtered by Run:ai's name of a field, each entry is one of Run:ai's AuditLog items (the
		// answer's schema names logs without describing it, so each is checked against AuditLog).
		q.Set("filterBy", "entity_type==workload-type")
		var changes struct{ Logs []map[string]any }
		c.do(t, exchange{method: "GET", route: "/api/v1/audit/log", query: q, want: 200, out: &changes})
		if len(changes.Logs) == 0 {
			t.Fatal("no audit entry of the workload type changed above")
		}
		item := c.doc.Components.Schemas["AuditLog"].Value
		for _, e := range changes.Logs {
			if e["entity_type"] != "workload-type" {
				t.Errorf("filtered by entity_type==workload-type, the log holds %v", e)
			}
			if err := item.VisitJSON(e, openapi3.DisablePatternValidation(), openapi3.MultiErrors()); err != nil {
				t.Errorf("an audit entry is not a Run:ai AuditLog:\n%s\nentry: %v", strings.Join(reasons(err), "\n"), e)
			}
		}
	}},
	{"GET /api/v1/node-pools", func(t *testing.T, c *client, o *org) {
		var all, filtered struct{ Nodepools []struct{ ID string } }
		// Run:ai's key, spelled as it spells it (encoding/json would take nodePools for it too).
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(c.do(t, exchange{method: "GET", route: "/api/v1/node-pools", want: 200, out: &all}), &keys); err != nil || keys["nodepools"] == nil {
			t.Errorf("the node pools are not under nodepools (%v)", err)
		}
		c.do(t, exchange{method: "GET", route: "/api/v1/node-pools", query: url.Values{"filterBy": {"name==gpu-a100"}, "sortBy": {"name"}, "sortOrder": {"asc"}, "offset": {"0"}, "limit": {"10"}}, want: 200, out: &filtered})
		if len(all.Nodepools) != 2 || len(filtered.Nodepools) != 1 || filtered.Nodepools[0].ID != o.poolID {
			t.Errorf("nodepools lists %v, and filtered by name %v; want the default pool and gpu-a100, then gpu-a100 (%s)", all.Nodepools, filtered.Nodepools, o.poolID)
		}
	}},
	{"GET /api/v1/node-pools/{nodepoolId}", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "GET", route: "/api/v1/node-pools/{nodepoolId}", params: map[string]string{"nodepoolId": o.poolID}, want: 200})
	}},
	{"GET /api/v1/org-unit/departments", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/departments", want: 200})
		var filtered struct{ Departments []struct{ ID string } }
		c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/departments", query: url.Values{"filterBy": {"name==research"}, "sortBy": {"name"}, "sortOrder": {"asc"}, "offset": {"0"}, "limit": {"10"}}, want: 200, out: &filtered})
		if len(filtered.Departments) != 1 || filtered.Departments[0].ID != o.departmentID {
			t.Errorf("departments filtered by name are %v, want research (%s)", filtered.Departments, o.departmentID)
		}
		var byQuota struct{ Departments []struct{ ID string } }
		c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/departments", query: url.Values{"filterBy": {"totalGpuQuota>=8,clusterId==" + c.clusterID(t, o)}, "sortBy": {"totalGpuQuota"}}, want: 200, out: &byQuota})
		if len(byQuota.Departments) != 1 || byQuota.Departments[0].ID != o.departmentID {
			t.Errorf("departments with 8 deserved GPUs or more are %v, want research (%s)", byQuota.Departments, o.departmentID)
		}
	}},
	{"GET /api/v1/org-unit/departments/{departmentId}", func(t *testing.T, c *client, o *org) {
		var dept runAIUnit
		c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/departments/{departmentId}", params: map[string]string{"departmentId": o.departmentID}, want: 200, out: &dept})
		want := runAIUnit{ClusterID: c.clusterID(t, o)}
		want.TotalResources.GPUQuota = 8
		if diff := cmp.Diff(want, dept); diff != "" {
			t.Errorf("research's Run:ai fields (-want +got):\n%s", diff)
		}
	}},
	{"GET /api/v1/org-unit/projects", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/projects", want: 200})
		var filtered struct{ Projects []struct{ ID string } }
		c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/projects", query: url.Values{"filterBy": {"name==vision"}, "sortBy": {"name"}, "sortOrder": {"asc"}, "offset": {"0"}, "limit": {"10"}}, want: 200, out: &filtered})
		if len(filtered.Projects) != 1 || filtered.Projects[0].ID != o.projectID {
			t.Errorf("projects filtered by name are %v, want vision (%s)", filtered.Projects, o.projectID)
		}
		// Run:ai's own filter and sort names for a project's parent, cluster and quota.
		var byParent struct{ Projects []struct{ ID string } }
		c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/projects", query: url.Values{
			"filterBy": {"parentName==research,clusterId==" + c.clusterID(t, o) + ",totalGpuQuota>=4"}, "sortBy": {"totalGpuQuota"}}, want: 200, out: &byParent})
		if len(byParent.Projects) != 1 || byParent.Projects[0].ID != o.projectID {
			t.Errorf("projects of parent research in the cluster with 4 GPUs or more are %v, want vision (%s)", byParent.Projects, o.projectID)
		}
	}},
	{"GET /api/v1/org-unit/projects/{projectId}", func(t *testing.T, c *client, o *org) {
		var proj runAIUnit
		c.do(t, exchange{method: "GET", route: "/api/v1/org-unit/projects/{projectId}", params: map[string]string{"projectId": o.projectID}, want: 200, out: &proj})
		want := runAIUnit{ClusterID: c.clusterID(t, o), ParentID: o.departmentID, EnforceRunaiScheduler: true}
		want.TotalResources.GPUQuota = 4
		want.Effective.DefaultNodePools = []string{"gpu-a100", "default"}
		if diff := cmp.Diff(want, proj); diff != "" {
			t.Errorf("vision's Run:ai fields (-want +got):\n%s", diff)
		}
	}},
	{"GET /api/v1/node-pools/count", func(t *testing.T, c *client, o *org) {
		counted(t, c, "/api/v1/node-pools/count", nil, 2)
		counted(t, c, "/api/v1/node-pools/count", url.Values{"filterBy": {"name==gpu-a100"}}, 1)
	}},
	{"GET /api/v1/org-unit/departments/count", func(t *testing.T, c *client, o *org) {
		counted(t, c, "/api/v1/org-unit/departments/count", url.Values{"filterBy": {"name==research"}}, 1)
		counted(t, c, "/api/v1/org-unit/departments/count", url.Values{"filterBy": {"name==nothing-is-called-this"}}, 0)
	}},
	{"GET /api/v1/org-unit/projects/count", func(t *testing.T, c *client, o *org) {
		counted(t, c, "/api/v1/org-unit/projects/count", nil, 1)
		counted(t, c, "/api/v1/org-unit/projects/count", url.Values{"filterBy": {"name==vision"}, "search": {"vis"}}, 1)
		counted(t, c, "/api/v1/org-unit/projects/count", url.Values{"filterBy": {"name==nothing-is-called-this"}}, 0)
	}},
	{"GET /api/v1/clusters", func(t *testing.T, c *client, o *org) {
		var clusters []struct{ UUID string }
		c.do(t, exchange{method: "GET", route: "/api/v1/clusters", want: 200, out: &clusters})
		if len(clusters) != 1 || clusters[0].UUID != c.clusterID(t, o) {
			t.Errorf("clusters are %v, want the one the node pools name, %s", clusters, c.clusterID(t, o))
		}
	}},
	{"GET /api/v1/clusters/{clusterUuid}", func(t *testing.T, c *client, o *org) {
		var cl struct{ UUID string }
		c.do(t, exchange{method: "GET", route: "/api/v1/clusters/{clusterUuid}", params: map[string]string{"clusterUuid": c.clusterID(t, o)}, want: 200, out: &cl})
		if cl.UUID != c.clusterID(t, o) {
			t.Errorf("the cluster by its id is %v", cl)
		}
		c.refusedNaming(t, exchange{method: "GET", route: "/api/v1/clusters/{clusterUuid}", params: map[string]string{"clusterUuid": foreignClusterID}, want: 404}, c.clusterID(t, o))
	}},
	{"POST /api/v1/node-pools", func(t *testing.T, c *client, o *org) {
		var pool struct{ ID, ClusterID string }
		c.do(t, exchange{method: "POST", route: "/api/v1/node-pools", body: map[string]any{"name": "gpu-h100", "labelKey": "arbiter.io/node-pool",
			"labelValue": "h100", "clusterId": c.clusterID(t, o)}, want: 201, out: &pool})
		o.secondPoolID = pool.ID
		foreign := exchange{method: "POST", route: "/api/v1/node-pools", body: map[string]any{"name": "gpu-l4", "labelKey": "arbiter.io/node-pool",
			"labelValue": "l4", "clusterId": foreignClusterID}, want: 400}
		c.refusedNaming(t, foreign, c.clusterID(t, o))
	}},
	{"PUT /api/v1/node-pools/{nodepoolId}", func(t *testing.T, c *client, o *org) {
		var pool struct{ LabelValue string }
		c.do(t, exchange{method: "PUT", route: "/api/v1/node-pools/{nodepoolId}", params: map[string]string{"nodepoolId": o.secondPoolID},
			body: map[string]any{"labelValue": "h100-sxm"}, want: 200, out: &pool})
		if pool.LabelValue != "h100-sxm" {
			t.Errorf("after the change the pool's labelValue is %q, want h100-sxm", pool.LabelValue)
		}
	}},
	{"DELETE /api/v1/node-pools/{nodepoolId}", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "DELETE", route: "/api/v1/node-pools/{nodepoolId}", params: map[string]string{"nodepoolId": o.secondPoolID}, want: 204})
		c.do(t, exchange{method: "GET", route: "/api/v1/node-pools/{nodepoolId}", params: map[string]string{"nodepoolId": o.secondPoolID}, want: 404})
	}},
	{"POST /api/v1/org-unit/departments", func(t *testing.T, c *client, o *org) {
		var dept struct{ ID string }
		c.do(t, exchange{method: "POST", route: "/api/v1/org-unit/departments", body: map[string]any{"name": "platform", "clusterId": c.clusterID(t, o),
			"resources": gpus(o.poolID, 2)}, want: 201, out: &dept})
		o.secondDepartmentID = dept.ID
		c.refusedNaming(t, exchange{method: "POST", route: "/api/v1/org-unit/departments", body: map[string]any{"name": "elsewhere",
			"clusterId": foreignClusterID, "resources": gpus(o.poolID, 1)}, want: 400}, c.clusterID(t, o))
	}},
	{"PUT /api/v1/org-unit/departments/{departmentId}", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "PUT", route: "/api/v1/org-unit/departments/{departmentId}", params: map[string]string{"departmentId": o.secondDepartmentID},
			body: map[string]any{"resources": gpus(o.poolID, 3)}, want: 200})
	}},
	{"POST /api/v1/org-unit/projects", func(t *testing.T, c *client, o *org) {
		var proj struct{ ID, ParentID string }
		c.do(t, exchange{method: "POST", route: "/api/v1/org-unit/projects", body: map[string]any{"name": "tooling", "clusterId": c.clusterID(t, o),
			"parentId": o.secondDepartmentID, "requestedNamespace": "runai-tooling", "resources": gpus(o.poolID, 1)}, want: 201, out: &proj})
		o.secondProjectID = proj.ID
		if proj.ParentID != o.secondDepartmentID {
			t.Errorf("the new project's parentId is %q, want its department %s", proj.ParentID, o.secondDepartmentID)
		}
		c.refusedNaming(t, exchange{method: "POST", route: "/api/v1/org-unit/projects", body: map[string]any{"name": "elsewhere",
			"clusterId": foreignClusterID, "parentId": o.secondDepartmentID, "resources": gpus(o.poolID, 1)}, want: 400}, c.clusterID(t, o))
	}},
	{"PUT /api/v1/org-unit/projects/{projectId}", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "PUT", route: "/api/v1/org-unit/projects/{projectId}", params: map[string]string{"projectId": o.secondProjectID},
			body: map[string]any{"resources": gpus(o.poolID, 2)}, want: 200})
	}},
	{"PUT /api/v1/org-unit/projects/{projectId}/resources", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "PUT", route: "/api/v1/org-unit/projects/{projectId}/resources", params: map[string]string{"projectId": o.secondProjectID},
			body: gpus(o.poolID, 1), want: 200})
	}},
	{"PATCH /api/v1/org-unit/projects/{projectId}/resources", func(t *testing.T, c *client, o *org) {
		var quotas []struct{ GPU struct{ Deserved int } }
		c.do(t, exchange{method: "PATCH", route: "/api/v1/org-unit/projects/{projectId}/resources", params: map[string]string{"projectId": o.secondProjectID},
			body: gpus(o.poolID, 2), want: 200, out: &quotas})
		if len(quotas) != 1 || quotas[0].GPU.Deserved != 2 {
			t.Errorf("the project's quotas after the PATCH are %+v, want the one pool's, 2 deserved", quotas)
		}
	}},
	{"PUT /api/v1/org-unit/departments/{departmentId}/resources", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "PUT", route: "/api/v1/org-unit/departments/{departmentId}/resources", params: map[string]string{"departmentId": o.secondDepartmentID},
			body: gpus(o.poolID, 4), want: 200})
	}},
	{"PATCH /api/v1/org-unit/departments/{departmentId}/resources", func(t *testing.T, c *client, o *org) {
		var quotas []struct{ GPU struct{ Deserved int } }
		c.do(t, exchange{method: "PATCH", route: "/api/v1/org-unit/departments/{departmentId}/resources", params: map[string]string{"departmentId": o.secondDepartmentID},
			body: gpus(o.poolID, 3), want: 200, out: &quotas})
		if len(quotas) != 1 || quotas[0].GPU.Deserved != 3 {
			t.Errorf("the department's quotas after the PATCH are %+v, want the one pool's, 3 deserved", quotas)
		}
	}},
	{"DELETE /api/v1/org-unit/projects/{projectId}", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "DELETE", route: "/api/v1/org-unit/projects/{projectId}", params: map[string]string{"projectId": o.secondProjectID}, want: 204})
	}},
	{"DELETE /api/v1/org-unit/departments/{departmentId}", func(t *testing.T, c *client, o *org) {
		c.do(t, exchange{method: "DELETE", route: "/api/v1/org-unit/departments/{departmentId}", params: map[string]string{"departmentId": o.secondDepartmentID}, want: 204})
	}},
}

// notYetChecked are the shared pairs this test does not call yet, and why.
var notYetChecked = map[string]string{}

// TestSharedRoutesConform calls every route in checked against one Arbiter and organization.
func TestSharedRoutesConform(t *testing.T) {
	t.Parallel()
	c := serve(t)
	o := &org{}
	var pool struct{ ID string }
	c.arbiter(t, "POST", "/api/v1/node-pools", map[string]any{"name": "gpu-a100", "labelKey": "arbiter.io/node-pool", "labelValue": "a100"}, &pool)
	var dept struct{ ID string }
	c.arbiter(t, "POST", "/api/v1/org-unit/departments", map[string]any{"name": "research",
		"resources": []any{map[string]any{"nodePool": map[string]any{"id": pool.ID}, "gpu": map[string]any{"deserved": 8}}}}, &dept)
	var proj struct{ ID string }
	c.arbiter(t, "POST", "/api/v1/org-unit/projects", map[string]any{"name": "vision", "departmentId": dept.ID, "namespaces": []string{"runai-vision"},
		"resources": []any{map[string]any{"nodePool": map[string]any{"id": pool.ID}, "gpu": map[string]any{"deserved": 4, "limit": 6, "overQuotaWeight": 2}}}}, &proj)
	var key struct{ ClientID, ClientSecret string }
	c.arbiter(t, "POST", "/api/v1/api-keys", map[string]any{"name": "conformance", "role": "admin"}, &key)
	o.poolID, o.departmentID, o.projectID, o.keyID, o.keySecret = pool.ID, dept.ID, proj.ID, key.ClientID, key.ClientSecret

	for _, ch := range checked {
		t.Run(ch.route, func(t *testing.T) { ch.check(t, c, o) })
	}
}

// TestEveryShareRouteIsListed: each method+path the extract holds (every pair Arbiter shares
// with the document) is checked above or listed as not yet checked, and nothing is both.
func TestEverySharedRouteIsListed(t *testing.T) {
	t.Parallel()
	doc := loadExtract(t)
	var shared []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			shared = append(shared, method+" "+path)
		}
	}
	slices.Sort(shared)
	var listed []string
	for _, ch := range checked {
		if _, ok := notYetChecked[ch.route]; ok {
			t.Errorf("%s is both checked and listed as not yet checked", ch.route)
		}
		listed = append(listed, ch.route)
	}
	for _, ch := range checkedOnCluster {
		if _, ok := notYetChecked[ch.route]; ok {
			t.Errorf("%s is both checked and listed as not yet checked", ch.route)
		}
		listed = append(listed, ch.route)
	}
	for r := range notYetChecked {
		listed = append(listed, r)
	}
	slices.Sort(listed)
	if diff := cmp.Diff(shared, listed); diff != "" {
		t.Errorf("the shared routes (-) and the routes checked or listed (+) differ:\n%s", diff)
	}
	t.Logf("%d shared method+path pairs, %d checked (%d of them on a cluster)", len(shared), len(checked)+len(checkedOnCluster), len(checkedOnCluster))
}
