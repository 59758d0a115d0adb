package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/views"
)

// TestNodePoolsPageManagesTopologies: on the Node pools page an admin creates a topology (levels
// one a line), gives a pool that topology from the pool's row, is refused deleting it while the
// pool refers to it (the page names the pool), and deletes it once the pool has none; levels
// that are no label keys are refused naming the level. A viewer sees the pool's topology by
// name and may create and delete none.
func TestNodePoolsPageManagesTopologies(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	pool := create(t, srv, "/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool"}`)
	form := func(token, path string, v url.Values) response {
		return doAs(t, srv, token, "POST", path, "application/x-www-form-urlencoded", v.Encode())
	}
	admin := tokenOf(srv)
	if r := form(admin, "/network-topologies", url.Values{"name": {"racks"}, "levels": {"topology.arbiter.dev/block\r\ntopology.arbiter.dev/rack\r\n"}}); r.status != 200 {
		t.Fatalf("create topology from the page = %d: %.500s", r.status, r.body)
	}
	topologies := list[views.NetworkTopology](t, srv, "/api/v1/network-topologies", "networkTopologies")
	if len(topologies) != 1 || strings.Join(topologies[0].Levels, ",") != "topology.arbiter.dev/block,topology.arbiter.dev/rack" {
		t.Fatalf("topologies after the page's create: %+v", topologies)
	}
	racks := topologies[0].ID
	if r := form(admin, "/network-topologies", url.Values{"name": {"bad"}, "levels": {"rack\nnot/a/label"}}); r.status != 400 || !strings.Contains(string(r.body), "levels[1]") {
		t.Errorf("bad levels from the page = %d, want 400 naming levels[1]: %.300s", r.status, r.body)
	}
	if r := form(admin, "/node-pools/"+pool, url.Values{"placement": {"binpack"}, "networkTopologyId": {racks}}); r.status != 200 {
		t.Fatalf("the pool's row given topology racks = %d: %.500s", r.status, r.body)
	}
	if p := getAs[views.NodePoolAnswer](t, srv, "/api/v1/node-pools/"+pool); p.NetworkTopologyName == nil || *p.NetworkTopologyName != "racks" {
		t.Fatalf("the pool's topology after its row's change: %v", p.NetworkTopologyName)
	}
	page := string(get(t, srv, "/node-pools").body)
	if !strings.Contains(page, `<option value="`+racks+`" selected>racks</option>`) || !strings.Contains(page, "pools: a100") {
		t.Errorf("the Node pools page does not show a100's topology racks selected and racks' pool:\n%.4000s", page)
	}
	if r := form(admin, "/network-topologies/"+racks+"/delete", nil); r.status != 409 || !strings.Contains(string(r.body), "node pools a100") {
		t.Errorf("delete of a topology a pool refers to = %d, want 409 naming a100: %.300s", r.status, r.body)
	}

	viewer := newAPIKey(t, st, "viewer", "system", "")
	if r := doAs(t, srv, viewer, "GET", "/node-pools", "", ""); r.status != 200 || !strings.Contains(string(r.body), "racks") || strings.Contains(string(r.body), "New network topology") {
		t.Errorf("a viewer's Node pools page: %d, shows racks %v, offers the create form %v", r.status, strings.Contains(string(r.body), "racks"), strings.Contains(string(r.body), "New network topology"))
	}
	for _, path := range []string{"/network-topologies", "/network-topologies/" + racks + "/delete"} {
		if r := form(viewer, path, url.Values{"name": {"blocks"}, "levels": {"rack"}}); r.status != 403 {
			t.Errorf("a viewer's POST %s = %d, want 403", path, r.status)
		}
	}

	if r := form(admin, "/node-pools/"+pool, url.Values{"placement": {"binpack"}, "networkTopologyId": {""}}); r.status != 200 {
		t.Fatalf("the pool's row given no topology = %d: %.500s", r.status, r.body)
	}
	if r := form(admin, "/network-topologies/"+racks+"/delete", nil); r.status != 200 {
		t.Errorf("delete of a topology no pool refers to = %d: %.300s", r.status, r.body)
	}
	if got := list[views.NetworkTopology](t, srv, "/api/v1/network-topologies", "networkTopologies"); len(got) != 0 {
		t.Errorf("after the delete: %+v", got)
	}
}
