package web

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
)

// Run:ai's control-plane API names things an Arbiter installation has exactly one of: a
// tenant and a cluster. Its schemas require their ids on node pools, departments, projects and
// audit entries, so Arbiter answers them as constants, the same on every replica and across
// restarts, and accepts them in requests only when they name these.
const (
	// runAITenantID is the installation's one tenant (Run:ai's tenantId, an integer).
	runAITenantID = 1
	// runAIClusterName is the name of the installation's one cluster.
	runAIClusterName = store.ClusterName
)

// clusterIDKey is where a request's context holds the installation's cluster id.
const clusterIDKey = "arbiter.cluster-id"

// withClusterID gives every request the installation's cluster id (Deps.ClusterID).
func withClusterID(id string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Set(clusterIDKey, id)
			return next(c)
		}
	}
}

// clusterID is the installation's one cluster's id, as the request was given it.
func clusterID(c echo.Context) string {
	id, _ := c.Get(clusterIDKey).(string)
	return id
}

// runAIAuditEntry is an audit entry in Run:ai's AuditLog shape (snake_case names, its result
// and subject type spellings). Arbiter's actions beyond Run:ai's enum (issue, revoke, …) are
// answered as they are.
type runAIAuditEntry struct {
	ID             string `json:"id"`
	TenantID       string `json:"tenant_id"`
	Timestamp      string `json:"timestamp"`
	Subject        string `json:"subject"`
	SubjectType    string `json:"subject_type"`
	SourceIP       string `json:"source_ip,omitempty"`
	Action         string `json:"action"`
	HTTPMethod     string `json:"http_method,omitempty"`
	HTTPStatusCode int    `json:"http_status_code,omitempty"`
	EntityType     string `json:"entity_type,omitempty"`
	EntityID       string `json:"entity_id,omitempty"`
	EntityName     string `json:"entity_name,omitempty"`
	RequestID      string `json:"request_id,omitempty"`
	Result         string `json:"result"`
	ClusterID      string `json:"cluster_id"`
	ClusterName    string `json:"cluster_name"`
}

func runAIAuditView(e store.AuditEntry, cluster string) runAIAuditEntry {
	subjectType := "User" // people, and the groups they sign in through
	if e.SubjectType == "api-key" || e.SubjectType == "system" {
		subjectType = "App"
	}
	result := "Failed"
	if e.Result == "success" {
		result = "Succeeded"
	}
	return runAIAuditEntry{
		ID: strconv.FormatInt(e.ID, 10), TenantID: strconv.Itoa(runAITenantID), Timestamp: e.At.UTC().Format("2006-01-02T15:04:05.999999Z07:00"),
		Subject: e.Subject, SubjectType: subjectType, SourceIP: e.SourceIP, Action: e.Action, HTTPMethod: e.HTTPMethod,
		HTTPStatusCode: e.HTTPStatus, EntityType: e.EntityType, EntityID: e.EntityID, EntityName: e.EntityName,
		RequestID: e.RequestID, Result: result, ClusterID: cluster, ClusterName: runAIClusterName,
	}
}

// runAIAuditNames are Run:ai's names of the audit log's fields in sortBy and filterBy, and the
// names Arbiter's list knows them by; Run:ai's other fields are refused by the list as
// unknown, naming the fields it does know.
var runAIAuditNames = map[string]string{"timestamp": "at", "entity_type": "entityType"}

// runAIAuditQuery is the audit log's query with Run:ai's names translated: its field names
// in sortBy and filterBy, and numberOfSamples, its page size, as limit.
func runAIAuditQuery(in url.Values) url.Values {
	out := url.Values{}
	for k, vs := range in {
		out[k] = append([]string(nil), vs...)
	}
	if s, ok := runAIAuditNames[out.Get("sortBy")]; ok {
		out.Set("sortBy", s)
	}
	if f := out.Get("filterBy"); f != "" {
		terms := strings.Split(f, ",")
		for i, term := range terms {
			for runai, arbiter := range runAIAuditNames {
				if rest, ok := strings.CutPrefix(term, runai); ok && strings.ContainsAny(rest[:min(1, len(rest))], "=!<>") {
					terms[i] = arbiter + rest
				}
			}
		}
		out.Set("filterBy", strings.Join(terms, ","))
	}
	if n := out.Get("numberOfSamples"); n != "" && !out.Has("limit") {
		out.Set("limit", n)
	}
	out.Del("numberOfSamples")
	return out
}

// checkClusterID accepts Run:ai's clusterId in a request only when it is absent or names the
// installation's one cluster.
func checkClusterID(o optional[string], cluster string) error {
	if o.Set && (o.Null || o.Value != cluster) {
		return store.InvalidField("clusterId", "clusterId %q is not a cluster of this installation: it has one cluster, %s (send that, or leave clusterId out)", o.Value, cluster)
	}
	return nil
}

// inCluster is a request's update that first checks the request's clusterId against the
// installation's.
func inCluster[R interface{ clusterID() optional[string] }, U any](c echo.Context, update func(R) (U, error)) func(R) (U, error) {
	return func(r R) (U, error) {
		if err := checkClusterID(r.clusterID(), clusterID(c)); err != nil {
			var none U
			return none, err
		}
		return update(r)
	}
}

func (r nodePoolRequest) clusterID() optional[string]   { return r.ClusterID }
func (r departmentRequest) clusterID() optional[string] { return r.ClusterID }
func (r projectRequest) clusterID() optional[string]    { return r.ClusterID }

// nodePoolAnswer is a pool's view with Run:ai's fields: nodes names the pool's nodes in the
// scheduler's last cycle, placed by the rule the cycle places them by (scheduler.NodePoolOf).
func nodePoolAnswer(v views.NodePool, nodes []string, cluster string) views.NodePoolAnswer {
	phase := "Ready"
	switch {
	case v.Status.Nodes == 0:
		phase = "Empty"
	case v.Status.ReadyNodes == 0:
		phase = "Unschedulable"
	}
	if nodes == nil {
		nodes = []string{}
	}
	return views.NodePoolAnswer{NodePool: v, Status: views.NodePoolAnswerStatus{NodePoolStatus: v.Status, Nodes: nodes, NodeCount: v.Status.Nodes},
		ClusterID: cluster, ClusterName: runAIClusterName, TenantID: runAITenantID, IsDefault: v.Default, Phase: phase}
}

// nodesByPool are the names of the nodes of each pool in the scheduler's last cycle; empty
// without a cluster or before the first cycle.
func nodesByPool(cycles LastCycle) map[string][]string {
	out := map[string][]string{}
	if cycles == nil {
		return out
	}
	snap, _ := cycles.LastCycle()
	if snap == nil {
		return out
	}
	pools := slices.Clone(snap.NodePools)
	slices.SortFunc(pools, func(a, b scheduler.NodePool) int { return cmp.Compare(a.Name, b.Name) })
	for i := range snap.Nodes {
		if pool := scheduler.NodePoolOf(pools, &snap.Nodes[i]); pool != "" {
			out[pool] = append(out[pool], snap.Nodes[i].Name)
		}
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// runAIOrgUnit are Run:ai's required fields of a department or project with quotas qs.
func runAIOrgUnit(qs []store.Quota, cluster string) views.RunAIOrgUnit {
	var gpus float64
	for _, q := range qs {
		gpus += float64(q.Deserved)
	}
	return views.RunAIOrgUnit{ClusterID: cluster, TotalResources: views.TotalResources{GPUQuota: gpus}}
}

// fromRunAI is r with Run:ai's names of its fields as Arbiter's: a request may name the
// department as departmentId or parentId (the same one if both) and the namespace as
// namespaces or requestedNamespace (not both); clusterId and enforceRunaiScheduler are
// checked against what Arbiter is.
func (r projectRequest) fromRunAI() (projectRequest, error) {
	if r.EnforceRunaiScheduler.Set && !r.EnforceRunaiScheduler.Null && !r.EnforceRunaiScheduler.Value {
		return r, store.InvalidField("enforceRunaiScheduler", "enforceRunaiScheduler cannot be false: Arbiter's scheduler runs every workload of its projects (leave it out, or send true)")
	}
	if r.ParentID.Set {
		if r.DepartmentID.Set && (r.DepartmentID.Null != r.ParentID.Null || r.DepartmentID.Value != r.ParentID.Value) {
			return r, store.InvalidField("parentId", "parentId and departmentId both name the project's department and differ; send one of them")
		}
		r.DepartmentID = r.ParentID
	}
	if r.RequestedNamespace.Set {
		if r.Namespaces.Set {
			return r, store.InvalidField("requestedNamespace", "requestedNamespace and namespaces both set the project's namespaces; send one of them")
		}
		r.Namespaces = optional[[]string]{Set: true, Null: r.RequestedNamespace.Null}
		if !r.RequestedNamespace.Null {
			r.Namespaces.Value = []string{r.RequestedNamespace.Value}
		}
	}
	return r, nil
}

// runAIWorkloadEvent is v, an event of the workload r, with Run:ai's Event fields beside
// Arbiter's: a preemption, a reclaim or a failure is a Warning, anything else Normal.
func runAIWorkloadEvent(v views.WorkloadEvent, r store.WorkloadRecord, cluster string) views.WorkloadEvent {
	kind := "Normal"
	if v.Kind == "Preempted" || v.Kind == "Reclaimed" || v.Kind == "Failed" {
		kind = "Warning"
	}
	v.RunAIEvent = views.RunAIEvent{CreatedAt: v.At, Type: kind, ClusterID: cluster, Source: "arbiter",
		InvolvedObject: views.InvolvedObject{UID: r.UID, Kind: r.Kind, Name: r.Name, Namespace: r.Namespace}}
	return v
}
