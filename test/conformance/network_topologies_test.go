package conformance

import (
	"net/url"
	"testing"
)

// The network topologies routes; the read by id also reads a node pool made, changed and
// deleted with networkTopologyId (the node pool routes are checked in conformance_test.go).
// Each check makes the topologies it reads or changes, so none depends on another's.
func init() {
	checked = append(checked, []struct {
		route string
		check func(t *testing.T, c *client, o *org)
	}{
		{"POST /api/v1/network-topologies", func(t *testing.T, c *client, o *org) {
			topology := newTopology(t, c, o, "default-topology")
			if len(topology.Levels) != 3 || topology.Levels[1] != "cloud.provider.com/topology-rack" {
				t.Errorf("created levels %v, want the example's three", topology.Levels)
			}
			c.do(t, exchange{method: "POST", route: "/api/v1/network-topologies", body: map[string]any{"name": "default-topology",
				"clusterId": c.clusterID(t, o), "levels": []string{"rack"}}, want: 400})
			c.refusedNaming(t, exchange{method: "POST", route: "/api/v1/network-topologies", body: map[string]any{"name": "elsewhere",
				"clusterId": foreignClusterID, "levels": []string{"rack"}}, want: 400}, c.clusterID(t, o))
		}},
		{"GET /api/v1/network-topologies", func(t *testing.T, c *client, o *org) {
			newTopology(t, c, o, "listed")
			var all struct{ NetworkTopologies []struct{ Name string } }
			c.do(t, exchange{method: "GET", route: "/api/v1/network-topologies", query: url.Values{"filterBy": {"name==listed", "source=@Arb"}}, want: 200, out: &all})
			if len(all.NetworkTopologies) != 1 || all.NetworkTopologies[0].Name != "listed" {
				t.Errorf("filterBy name==listed lists %v", all.NetworkTopologies)
			}
		}},
		{"GET /api/v1/network-topologies/count", func(t *testing.T, c *client, o *org) {
			newTopology(t, c, o, "counted")
			counted(t, c, "/api/v1/network-topologies/count", url.Values{"filterBy": {"name==counted"}}, 1)
			counted(t, c, "/api/v1/network-topologies/count", url.Values{"filterBy": {"clusterId==" + foreignClusterID}}, 0)
		}},
		{"GET /api/v1/network-topologies/{networkTopologyId}", func(t *testing.T, c *client, o *org) {
			topology := newTopology(t, c, o, "read")
			var got runAITopology
			c.do(t, exchange{method: "GET", route: "/api/v1/network-topologies/{networkTopologyId}", params: map[string]string{"networkTopologyId": topology.ID}, want: 200, out: &got})
			if got.Name != "read" {
				t.Errorf("GET the topology answers %q", got.Name)
			}
			c.do(t, exchange{method: "GET", route: "/api/v1/network-topologies/{networkTopologyId}", params: map[string]string{"networkTopologyId": foreignClusterID}, want: 404})
			// A pool made with a topology answers its id and name; its topology lists it.
			pooled := newTopology(t, c, o, "pool-topology")
			var pool struct{ ID, NetworkTopologyID, NetworkTopologyName string }
			c.do(t, exchange{method: "POST", route: "/api/v1/node-pools", body: map[string]any{"name": "gpu-gb200", "labelKey": "arbiter.io/node-pool",
				"labelValue": "gb200", "clusterId": c.clusterID(t, o), "networkTopologyId": pooled.ID}, want: 201, out: &pool})
			if pool.NetworkTopologyID != pooled.ID || pool.NetworkTopologyName != "pool-topology" {
				t.Errorf("the pool's topology is %q (%q), want %s (pool-topology)", pool.NetworkTopologyID, pool.NetworkTopologyName, pooled.ID)
			}
			c.do(t, exchange{method: "GET", route: "/api/v1/network-topologies/{networkTopologyId}", params: map[string]string{"networkTopologyId": pooled.ID}, want: 200, out: &got})
			if len(got.NodePools) != 1 || got.NodePools[0] != "gpu-gb200" {
				t.Errorf("the topology's nodePools are %v, want gpu-gb200", got.NodePools)
			}
			var cleared struct{ NetworkTopologyID *string }
			c.do(t, exchange{method: "PUT", route: "/api/v1/node-pools/{nodepoolId}", params: map[string]string{"nodepoolId": pool.ID},
				body: map[string]any{"networkTopologyId": nil}, want: 200, out: &cleared})
			if cleared.NetworkTopologyID != nil {
				t.Errorf("after networkTopologyId null the pool's topology is %q", *cleared.NetworkTopologyID)
			}
			c.do(t, exchange{method: "PUT", route: "/api/v1/node-pools/{nodepoolId}", params: map[string]string{"nodepoolId": pool.ID},
				body: map[string]any{"networkTopologyId": foreignClusterID}, want: 400})
			c.do(t, exchange{method: "DELETE", route: "/api/v1/node-pools/{nodepoolId}", params: map[string]string{"nodepoolId": pool.ID}, want: 204})
		}},
		{"DELETE /api/v1/network-topologies/{networkTopologyId}", func(t *testing.T, c *client, o *org) {
			topology := newTopology(t, c, o, "deleted")
			c.do(t, exchange{method: "DELETE", route: "/api/v1/network-topologies/{networkTopologyId}", params: map[string]string{"networkTopologyId": topology.ID}, want: 204})
			c.do(t, exchange{method: "DELETE", route: "/api/v1/network-topologies/{networkTopologyId}", params: map[string]string{"networkTopologyId": topology.ID}, want: 404})
		}},
	}...)
}

// runAITopology is Run:ai's NetworkTopology, as far as the checks read it.
type runAITopology struct {
	ID, Name  string
	Levels    []string
	NodePools []string
}

// newTopology creates a topology named name with the levels of the document's example.
func newTopology(t *testing.T, c *client, o *org, name string) runAITopology {
	t.Helper()
	var created runAITopology
	c.do(t, exchange{method: "POST", route: "/api/v1/network-topologies", body: map[string]any{"name": name, "clusterId": c.clusterID(t, o),
		"levels": []string{"cloud.provider.com/topology-block", "cloud.provider.com/topology-rack", "kubernetes.io/hostname"}}, want: 201, out: &created})
	if created.ID == "" || created.Name != name {
		t.Fatalf("created %+v, want an id and %s", created, name)
	}
	return created
}
