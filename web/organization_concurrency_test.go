package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/go-cmp/cmp"
)

// parallel sends every request at once (as the admin) and fails unless each answers 200.
func parallel(t *testing.T, srv *httptest.Server, reqs [][3]string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]string, len(reqs))
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			contentType := "application/json"
			if strings.HasPrefix(r[1], "/projects/") || strings.HasPrefix(r[1], "/departments/") {
				contentType = "application/x-www-form-urlencoded"
			}
			res := doAs(t, srv, tokenOf(srv), r[0], r[1], contentType, r[2])
			if res.status != 200 {
				errs[i] = fmt.Sprintf("%s %s %s = %d: %.300s", r[0], r[1], r[2], res.status, res.body)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
}

// change is one field's entry in an audit row's changes.
type change struct {
	From any `json:"from"`
	To   any `json:"to"`
}

// changesOf reads an audit row's changes as field -> change.
func changesOf(t *testing.T, e store.AuditEntry) map[string]change {
	t.Helper()
	b, err := json.Marshal(e.Changes)
	if err != nil {
		t.Fatal(err)
	}
	return decode[map[string]change](t, b)
}

// checkAuditChain asserts that, for each field, the audit rows of the entity with that id
// chain: each row's "from" is the previous row's "to", starting at first[field].
func checkAuditChain(t *testing.T, st *store.Store, entityType, id string, first map[string]string) {
	t.Helper()
	all, err := st.AuditEntries(context.Background(), 10000)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(all) // oldest first
	last := maps.Clone(first)
	rows := 0
	for _, e := range all {
		if e.EntityType != entityType || e.EntityID != id || e.Action != "update" || e.Result != "success" {
			continue
		}
		rows++
		for field, c := range changesOf(t, e) {
			prev, tracked := last[field]
			if tracked && fmt.Sprint(c.From) != prev {
				t.Errorf("audit row %d of %s %s: %s changed from %v, but the row before left it at %v", e.ID, entityType, id, field, c.From, prev)
			}
			last[field] = fmt.Sprint(c.To)
		}
	}
	if rows == 0 {
		t.Fatalf("no audit rows for %s %s", entityType, id)
	}
}

// TestConcurrentProjectUpdatesLoseNothing: 20 rounds of four parallel PUTs on one project,
// each setting another field (three policy fields and the quotas), end with every field set,
// and the audit rows' from/to values chain.
func TestConcurrentProjectUpdatesLoseNothing(t *testing.T) {
	t.Parallel()
	srv, st, _, _, proj := orgAPI(t)
	path := "/api/v1/org-unit/projects/" + proj
	want := getAs[views.Project](t, srv, path)
	orders, modes, queues := []string{"newest", "oldest"}, []string{"suspend", "terminate"}, []string{"strict", "best-effort"}
	for round := range 20 {
		order, mode, queue, deserved := orders[round%2], modes[round%2], queues[round%2], round%10+1
		parallel(t, srv, [][3]string{
			{"PUT", path, `{"policy":{"preemptionOrder":"` + order + `"}}`},
			{"PUT", path, `{"policy":{"preemptionMode":"` + mode + `"}}`},
			{"PUT", path, `{"policy":{"queueing":"` + queue + `"}}`},
			{"PUT", path + "/resources", fmt.Sprintf(`[{"nodePool":{"name":"a100"},"gpu":{"deserved":%d,"limit":12,"overQuotaWeight":3}}]`, deserved)},
		})
		want.Policy.PreemptionOrder, want.Policy.PreemptionMode, want.Policy.Queueing = order, mode, queue
		want.Resources = []views.Quota{{NodePool: want.Resources[0].NodePool, GPU: views.QuotaGPU{Deserved: deserved, Limit: 12, OverQuotaWeight: 3}}}
		want.TotalResources.GPUQuota = float64(deserved)
		if diff := cmp.Diff(want, getAs[views.Project](t, srv, path), stamps); diff != "" {
			t.Fatalf("round %d: a parallel change was lost (-want +got):\n%s", round, diff)
		}
	}
	checkAuditChain(t, st, "project", proj, map[string]string{"preemptionOrder": "oldest", "preemptionMode": "terminate",
		"queueing": "best-effort", "resources": "a100: deserved 10, limit 12, weight 3"})
}

// TestConcurrentNodePoolUpdatesLoseNothing: the same for a node pool's four fields.
func TestConcurrentNodePoolUpdatesLoseNothing(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	pool := create(t, srv, "/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool"}`)
	path := "/api/v1/node-pools/" + pool
	want := arbiterPool(getAs[views.NodePoolAnswer](t, srv, path))
	keys, placements := []string{"example.com/pool", "arbiter.dev/node-pool"}, []string{"spread", "binpack"}
	for round := range 20 {
		name, key, value, placement := fmt.Sprintf("pool-%d", round), keys[round%2], fmt.Sprintf("gpu-%d", round), placements[round%2]
		parallel(t, srv, [][3]string{
			{"PUT", path, `{"name":"` + name + `"}`},
			{"PUT", path, `{"labelKey":"` + key + `"}`},
			{"PUT", path, `{"labelValue":"` + value + `"}`},
			{"PUT", path, `{"placement":"` + placement + `"}`},
		})
		want.Name, want.LabelKey, want.LabelValue, want.Placement = name, key, value, placement
		if diff := cmp.Diff(want, arbiterPool(getAs[views.NodePoolAnswer](t, srv, path)), stamps); diff != "" {
			t.Fatalf("round %d: a parallel change was lost (-want +got):\n%s", round, diff)
		}
	}
	checkAuditChain(t, st, "node-pool", pool, map[string]string{"name": "a100", "labelKey": "arbiter.dev/node-pool", "labelValue": "a100", "placement": "binpack"})
}

// TestConcurrentQuotaCellEditsLoseNothing: the console edits one node pool's quota at a time;
// parallel edits of different pools' quotas of one project and of one department all stay.
func TestConcurrentQuotaCellEditsLoseNothing(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	var pools []string
	for _, name := range []string{"p1", "p2", "p3"} {
		pools = append(pools, create(t, srv, "/api/v1/node-pools", `{"name":"`+name+`","labelKey":"arbiter.dev/node-pool"}`))
	}
	dept := create(t, srv, "/api/v1/org-unit/departments", `{"name":"research","resources":[
		{"nodePool":{"name":"p1"},"gpu":{"deserved":100}},{"nodePool":{"name":"p2"},"gpu":{"deserved":100}},{"nodePool":{"name":"p3"},"gpu":{"deserved":100}}]}`)
	proj := create(t, srv, "/api/v1/org-unit/projects", `{"name":"alpha","departmentId":"`+dept+`"}`)
	for round := range 10 {
		var reqs [][3]string
		for i, pool := range pools {
			reqs = append(reqs, [3]string{"POST", "/projects/" + proj + "/quotas/" + pool, fmt.Sprintf("deserved=%d", round+i+1)})
			reqs = append(reqs, [3]string{"POST", "/departments/" + dept + "/quotas/" + pool, fmt.Sprintf("deserved=%d", 50+round+i)})
		}
		parallel(t, srv, reqs)
		for kind, resources := range map[string][]views.Quota{
			"project":    getAs[views.Project](t, srv, "/api/v1/org-unit/projects/"+proj).Resources,
			"department": getAs[views.Department](t, srv, "/api/v1/org-unit/departments/"+dept).Resources,
		} {
			want := map[string]int{}
			for i, name := range []string{"p1", "p2", "p3"} {
				want[name] = round + i + 1
				if kind == "department" {
					want[name] = 50 + round + i
				}
			}
			got := map[string]int{}
			for _, q := range resources {
				got[q.NodePool.Name] = q.GPU.Deserved
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("round %d: a parallel edit of another pool's quota of the %s was lost (-want +got deserved GPUs):\n%s", round, kind, diff)
			}
		}
	}
	checkAuditChain(t, st, "project", proj, map[string]string{"resources": ""})
	checkAuditChain(t, st, "department", dept, map[string]string{"resources": "p1: deserved 100, limit none, weight 2; p2: deserved 100, limit none, weight 2; p3: deserved 100, limit none, weight 2"})
}
