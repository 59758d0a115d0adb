package web_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
)

// racksBody is Run:ai's own example of a NetworkTopologyCreateRequest, with this
// installation's cluster.
var racksBody = `{"name":"racks","clusterId":"` + store.DefaultClusterID.String() + `",
	"levels":["topology.arbiter.dev/block","topology.arbiter.dev/rack","kubernetes.io/hostname"]}`

// TestNetworkTopologyIsCreatedReferredToByAPoolAndProtectedWhileItIs: a topology created as
// Run:ai's example sends it reads back whole; a pool given it by networkTopologyId answers its
// id and name and the topology lists the pool; it cannot be deleted until the pool lets go.
func TestNetworkTopologyIsCreatedReferredToByAPoolAndProtectedWhileItIs(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	created := sendAs[views.NetworkTopology](t, srv, "POST", "/api/v1/network-topologies", racksBody, 201)
	want := views.NetworkTopology{ID: created.ID, Name: "racks", ClusterID: store.DefaultClusterID.String(),
		Levels: []string{"topology.arbiter.dev/block", "topology.arbiter.dev/rack", "kubernetes.io/hostname"}, TenantID: 1,
		Phase: "Ready", Source: "Arbiter", NodePools: []string{}, Status: views.NetworkTopologyStatus{Phase: "Ready"}}
	ignoreStamps := cmpopts.IgnoreFields(views.NetworkTopology{}, "CreatedAt", "CreatedBy")
	if d := cmp.Diff(want, created, ignoreStamps); d != "" {
		t.Errorf("created (-want +got):\n%s", d)
	}
	pool := sendAs[views.NodePoolAnswer](t, srv, "POST", "/api/v1/node-pools",
		`{"name":"a100","labelKey":"arbiter.dev/node-pool","networkTopologyId":"`+created.ID+`"}`, 201)
	if pool.NetworkTopologyID == nil || *pool.NetworkTopologyID != created.ID || pool.NetworkTopologyName == nil || *pool.NetworkTopologyName != "racks" {
		t.Errorf("pool's topology = %v, %v; want %s (racks)", pool.NetworkTopologyID, pool.NetworkTopologyName, created.ID)
	}
	want.NodePools = []string{"a100"}
	if d := cmp.Diff(want, getAs[views.NetworkTopology](t, srv, "/api/v1/network-topologies/"+created.ID), ignoreStamps); d != "" {
		t.Errorf("read back (-want +got):\n%s", d)
	}
	if got := list[views.NodePoolAnswer](t, srv, "/api/v1/node-pools?filterBy=networkTopologyName==racks", "nodePools"); len(got) != 1 || got[0].Name != "a100" {
		t.Errorf("pools filtered by networkTopologyName==racks = %v, want a100", namesOf(got, func(p views.NodePoolAnswer) string { return p.Name }))
	}
	refused := send(t, srv, "DELETE", "/api/v1/network-topologies/"+created.ID, "", 409).refusal(t)
	if !strings.Contains(refused.Message, "a100") {
		t.Errorf("delete refused with %q; want the pool named", refused.Message)
	}
	if p := sendAs[views.NodePoolAnswer](t, srv, "PUT", "/api/v1/node-pools/"+pool.ID, `{"networkTopologyId":null}`, 200); p.NetworkTopologyID != nil || p.NetworkTopologyName != nil {
		t.Errorf("pool after networkTopologyId null: %v %v, want none", p.NetworkTopologyID, p.NetworkTopologyName)
	}
	send(t, srv, "DELETE", "/api/v1/network-topologies/"+created.ID, "", 204)
	send(t, srv, "GET", "/api/v1/network-topologies/"+created.ID, "", 404)
}

// TestNetworkTopologiesListAndCountFilter: Run:ai's filterBy (name, source, clusterId) selects
// the same topologies in the list and the count.
func TestNetworkTopologiesListAndCountFilter(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	for _, name := range []string{"racks", "blocks", "zones"} {
		create(t, srv, "/api/v1/network-topologies", `{"name":"`+name+`","levels":["topology.arbiter.dev/`+strings.TrimSuffix(name, "s")+`"]}`)
	}
	for _, tc := range []struct{ filter, want string }{
		{"", "blocks,racks,zones"},
		{"name=@ck", "blocks,racks"},
		{"source==Arbiter", "blocks,racks,zones"},
		{"source==Run.ai", ""},
		{"clusterId==" + store.DefaultClusterID.String(), "blocks,racks,zones"},
	} {
		got := list[views.NetworkTopology](t, srv, "/api/v1/network-topologies?filterBy="+tc.filter, "networkTopologies")
		if names := namesOf(got, func(n views.NetworkTopology) string { return n.Name }); names != tc.want {
			t.Errorf("filterBy %q lists %q, want %q", tc.filter, names, tc.want)
		}
		count := decode[struct{ Count int }](t, get(t, srv, "/api/v1/network-topologies/count?filterBy="+tc.filter).body)
		if want := len(strings.FieldsFunc(tc.want, func(r rune) bool { return r == ',' })); count.Count != want {
			t.Errorf("count with filterBy %q = %d, want %d", tc.filter, count.Count, want)
		}
	}
	if r := do(t, srv, "GET", "/api/v1/network-topologies?filterBy=levels==rack", "", ""); r.status != 400 || !strings.Contains(r.refusal(t).Message, "levels") {
		t.Errorf("filterBy levels: %d %s; want 400 naming levels", r.status, r.body)
	}
}

// TestNetworkTopologyBadInputIsA400NamingTheField: each bad body is refused with 400 (a name
// taken too, as Run:ai's create answers) and a sentence naming the field, and nothing is created.
func TestNetworkTopologyBadInputIsA400NamingTheField(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	create(t, srv, "/api/v1/network-topologies", `{"name":"taken","levels":["rack"]}`)
	pool := create(t, srv, "/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool"}`)
	for _, tc := range []struct {
		path, method, body string
		status             int
		field              string
	}{
		{"/api/v1/network-topologies", "POST", `{"levels":["rack"]}`, 400, "name"},
		{"/api/v1/network-topologies", "POST", `{"name":null,"levels":["rack"]}`, 400, "name"},
		{"/api/v1/network-topologies", "POST", `{"name":"Racks","levels":["rack"]}`, 400, "name"},
		{"/api/v1/network-topologies", "POST", `{"name":"taken","levels":["rack"]}`, 400, "taken"},
		{"/api/v1/network-topologies", "POST", `{"name":"racks"}`, 400, "levels"},
		{"/api/v1/network-topologies", "POST", `{"name":"racks","levels":[]}`, 400, "levels"},
		{"/api/v1/network-topologies", "POST", `{"name":"racks","levels":"rack"}`, 400, "levels"},
		{"/api/v1/network-topologies", "POST", `{"name":"racks","levels":[7]}`, 400, "levels"},
		{"/api/v1/network-topologies", "POST", `{"name":"racks","levels":["a rack"]}`, 400, "levels[0]"},
		{"/api/v1/network-topologies", "POST", `{"name":"racks","levels":["rack","rack"]}`, 400, "levels[1]"},
		{"/api/v1/network-topologies", "POST", `{"name":"racks","levels":["rack"],"clusterId":"71f69d83-ba66-4822-adf5-55ce55efd210"}`, 400, "clusterId"},
		{"/api/v1/network-topologies", "POST", `{"name":"racks","levels":["rack"],"phase":"Ready"}`, 400, "phase"},
		{"/api/v1/network-topologies/count-me", "GET", ``, 400, "count-me"},
		{"/api/v1/node-pools/" + pool, "PUT", `{"networkTopologyId":"racks"}`, 400, "networkTopologyId"},
		{"/api/v1/node-pools/" + pool, "PUT", `{"networkTopologyId":"71f69d83-ba66-4822-adf5-55ce55efd210"}`, 400, "networkTopologyId"},
	} {
		r := do(t, srv, tc.method, tc.path, "application/json", tc.body)
		if r.status != tc.status || !strings.Contains(r.refusal(t).Message, tc.field) {
			t.Errorf("%s %s %s = %d %s; want %d naming %s", tc.method, tc.path, tc.body, r.status, r.body, tc.status, tc.field)
		}
	}
	if got := list[views.NetworkTopology](t, srv, "/api/v1/network-topologies", "networkTopologies"); len(got) != 1 {
		t.Errorf("after the refusals %d topologies, want 1 (taken)", len(got))
	}
	if p := getAs[views.NodePoolAnswer](t, srv, "/api/v1/node-pools/"+pool); p.NetworkTopologyID != nil {
		t.Errorf("refused pool change left topology %v", *p.NetworkTopologyID)
	}
}

// TestNetworkTopologiesEveryRoleReadsOnlyAdminsWrite: every role at every scope reads the
// topologies (list, count, by id), as it reads node pools; only the admin creates, deletes and
// gives a pool a topology; the refused changes did not happen; nobody signed out reads them.
func TestNetworkTopologiesEveryRoleReadsOnlyAdminsWrite(t *testing.T) {
	t.Parallel()
	for _, rc := range roleCases {
		t.Run(rc.role+"@"+rc.scope, func(t *testing.T) {
			t.Parallel()
			w := newOrgWorld(t)
			topo := create(t, w.srv, "/api/v1/network-topologies", racksBody)
			scopeType, scopeID := w.scopeID(rc.scope)
			token := newAPIKey(t, w.st, rc.role, scopeType, scopeID)
			call := func(method, path, body string) int {
				return doAs(t, w.srv, token, method, path, "application/json", body).status
			}
			adminOnly := func(ok int) int {
				if rc.admin {
					return ok
				}
				return 403
			}
			for _, tc := range []struct {
				what, method, path, body string
				want                     int
			}{
				{"list", "GET", "/api/v1/network-topologies", "", 200},
				{"count", "GET", "/api/v1/network-topologies/count", "", 200},
				{"get", "GET", "/api/v1/network-topologies/" + topo, "", 200},
				{"create", "POST", "/api/v1/network-topologies", `{"name":"blocks","levels":["topology.arbiter.dev/block"]}`, adminOnly(201)},
				{"give a pool the topology", "PUT", "/api/v1/node-pools/" + w.pool, `{"networkTopologyId":"` + topo + `"}`, adminOnly(200)},
				{"delete", "DELETE", "/api/v1/network-topologies/" + topo, "", adminOnly(409)}, // the pool refers to it
			} {
				if got := call(tc.method, tc.path, tc.body); got != tc.want {
					t.Errorf("%s = %d, want %d", tc.what, got, tc.want)
				}
			}
			if got := doAs(t, w.srv, "", "GET", "/api/v1/network-topologies", "", "").status; got != 401 {
				t.Errorf("list signed out = %d, want 401", got)
			}
			if !rc.admin {
				names := namesOf(list[views.NetworkTopology](t, w.srv, "/api/v1/network-topologies", "networkTopologies"), func(n views.NetworkTopology) string { return n.Name })
				if p := getAs[views.NodePoolAnswer](t, w.srv, "/api/v1/node-pools/"+w.pool); names != "racks" || p.NetworkTopologyID != nil {
					t.Errorf("after refused changes: topologies %q, pool's topology %v; want racks and none", names, p.NetworkTopologyID)
				}
			}
		})
	}
}
