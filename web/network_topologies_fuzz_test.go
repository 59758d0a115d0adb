package web

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/arbiterhq/arbiter/store"
)

// FuzzDecodeNetworkTopology checks that a network topology body is refused with a 4xx and a
// sentence, or decodes into a name and levels that the store either keeps or refuses naming
// name or levels: never anything else.
func FuzzDecodeNetworkTopology(f *testing.F) {
	for _, s := range []string{`{"name":"default-topology","clusterId":"71f69d83-ba66-4822-adf5-55ce55efd210","levels":["cloud.provider.com/topology-block","cloud.provider.com/topology-rack","kubernetes.io/hostname"]}`,
		`{"name":"racks","levels":["rack"]}`, `{"name":"racks","levels":["rack"],"clusterId":"d73a738f-fab3-430a-8fa3-5241493d7128"}`, `{"name":"racks","levels":[]}`, `{"name":"racks","levels":null}`, `{"name":"racks","levels":["rack","rack"]}`,
		`{"name":"racks","levels":[1]}`, `{"name":"racks","levels":"rack"}`, `{"name":"Racks","levels":["rack"]}`, `{"name":null}`, `{"levels":["rack"]}`,
		`{"name":"racks","levels":["a/b/c"]}`, `{"name":"racks","levels":["\u0000"]}`, "{\"name\":\"\xff\",\"levels\":[\"rack\"]}",
		`{"name":"a","name":"b","levels":["rack"]}`, `{"Name":"a","levels":["rack"]}`, `{"name":"a","levels":["rack"],"phase":"Ready"}`, `[]`, `null`, `{`, `{}{}`} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		c := jsonContext(e, http.MethodPost, body)
		c.Set(clusterIDKey, "71f69d83-ba66-4822-adf5-55ce55efd210")
		r, err := decodeChange(c, networkTopologyFields, inCluster(c, networkTopologyRequest.create))
		if err != nil {
			// A foreign clusterId is the store's kind of refusal (checkClusterID); the rest
			// are the decoder's.
			if status, msg := statusOf(err); store.FieldOf(err) != "clusterId" || status != http.StatusBadRequest || msg == "" {
				checkRefusal(t, body, err)
			}
			return
		}
		for _, check := range []error{store.CheckTopologyName(r.name), store.CheckTopologyLevels(r.levels)} {
			if field := store.FieldOf(check); check != nil && (!errors.Is(check, store.ErrInvalid) || field != "name" && field != "levels") {
				t.Fatalf("body %q: the store refuses with %v (field %q), not a refusal naming name or levels", body, check, field)
			}
		}
	})
}

// FuzzDecodeNodePoolTopology checks that a node pool body's networkTopologyId is refused with
// a 4xx and a sentence unless it is null or a UUID, and is a change only when the body names it.
func FuzzDecodeNodePoolTopology(f *testing.F) {
	for _, s := range []string{`{"networkTopologyId":"123e4567-e89b-12d3-a456-426614174000"}`, `{"networkTopologyId":null}`,
		`{"networkTopologyId":"racks"}`, `{"networkTopologyId":7}`, `{"networkTopologyId":["x"]}`, `{"networkTopologyName":"racks"}`, `{}`} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		u, err := decodeChange(jsonContext(e, http.MethodPut, body), nodePoolFields, nodePoolRequest.update)
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		if u.NetworkTopology.Set && !strings.Contains(body, "networkTopologyId") {
			t.Fatalf("body %q: a topology change the body does not name", body)
		}
	})
}
