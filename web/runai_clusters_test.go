package web_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// runAICluster is Run:ai's DisplayedCluster as Arbiter answers it.
type runAICluster struct {
	UUID      string    `json:"uuid"`
	TenantID  int       `json:"tenantId"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// An installation is one cluster: /api/v1/clusters lists it, to every signed-in caller, with
// the id the node pools name as their clusterId; by that id it is answered alone, and any
// other id is a 404 that names the one there is.
func TestTheInstallationIsOneCluster(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	pools := decodeList[json.RawMessage](t, get(t, srv, "/api/v1/node-pools").body, "nodePools").Items
	var pool struct {
		ClusterID string    `json:"clusterId"`
		CreatedAt time.Time `json:"createdAt"`
	}
	if err := json.Unmarshal(pools[0], &pool); err != nil || pool.ClusterID == "" {
		t.Fatalf("a node pool names no clusterId: %v %s", err, pools[0])
	}
	dept := create(t, srv, "/api/v1/org-unit/departments", `{"name":"research"}`)
	proj := create(t, srv, "/api/v1/org-unit/projects", `{"name":"alpha","departmentId":"`+dept+`"}`)
	viewer := newAPIKey(t, st, "viewer", "project", proj)

	for who, token := range map[string]string{"an admin": tokenOf(srv), "a viewer of one project": viewer} {
		t.Run(who, func(t *testing.T) {
			r := doAs(t, srv, token, "GET", "/api/v1/clusters", "", "")
			if r.status != 200 {
				t.Fatalf("GET /api/v1/clusters = %d: %s", r.status, r.body)
			}
			clusters := decode[[]runAICluster](t, r.body)
			if len(clusters) != 1 {
				t.Fatalf("clusters = %+v, want one", clusters)
			}
			c := clusters[0]
			if c.UUID != pool.ClusterID || c.TenantID != 1 || c.Name == "" || c.CreatedAt.IsZero() {
				t.Errorf("cluster = %+v; the node pools name cluster %s", c, pool.ClusterID)
			}
			r = doAs(t, srv, token, "GET", "/api/v1/clusters/"+pool.ClusterID, "", "")
			if r.status != 200 {
				t.Fatalf("GET /api/v1/clusters/%s = %d: %s", pool.ClusterID, r.status, r.body)
			}
			if diff := cmp.Diff(c, decode[runAICluster](t, r.body)); diff != "" {
				t.Errorf("by id (-listed +got):\n%s", diff)
			}
		})
	}

	t.Run("another id is not found, and the answer names the cluster there is", func(t *testing.T) {
		foreign := uuid.NewString()
		r := do(t, srv, "GET", "/api/v1/clusters/"+foreign, "", "")
		if msg := r.refusal(t).Message; r.status != 404 || !strings.Contains(msg, foreign) || !strings.Contains(msg, pool.ClusterID) {
			t.Errorf("GET a foreign cluster = %d %q", r.status, msg)
		}
		r = do(t, srv, "GET", "/api/v1/clusters/arbiter", "", "")
		if msg := r.refusal(t).Message; r.status != 400 || !strings.Contains(msg, "arbiter") {
			t.Errorf("GET a cluster by a non-uuid = %d %q", r.status, msg)
		}
	})
}
