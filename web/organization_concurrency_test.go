package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/arbiterhq/arbiter/store"
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

// checkAuditChain asserts that, for each field, the audit rows of the entity with that id
// chain: each row's "from" is the previous row's "to", starting at first[field].
func checkAuditChain(t *testing.T, st *store.Store, entityType, id string, first map[string]any) {
	t.Helper()
	all, err := st.AuditEntries(context.Background(), 10000)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(all) // oldest first
	last := map[string]any{}
	for k, v := range first {
		last[k] = v
	}
	rows := 0
	for _, e := range all {
		if e.EntityType != entityType || e.EntityID != id || e.Action != "update" || e.Result != "success" {
			continue
		}
		rows++
		for field, raw := range e.Changes {
			c, _ := raw.(map[string]any)
			prev, tracked := last[field]
			if tracked && fmt.Sprint(c["from"]) != fmt.Sprint(prev) {
				t.Errorf("audit row %d of %s %s: %s changed from %v, but the row before left it at %v", e.ID, entityType, id, field, c["from"], prev)
			}
			last[field] = c["to"]
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
	orders, modes, queues := []string{"newest", "oldest"}, []string{"suspend", "terminate"}, []string{"strict", "best-effort"}
	for round := range 20 {
		order, mode, queue, deserved := orders[round%2], modes[round%2], queues[round%2], round%10+1
		parallel(t, srv, [][3]string{
			{"PUT", path, `{"policy":{"preemptionOrder":"` + order + `"}}`},
			{"PUT", path, `{"policy":{"preemptionMode":"` + mode + `"}}`},
			{"PUT", path, `{"policy":{"queueing":"` + queue + `"}}`},
			{"PUT", path + "/resources", fmt.Sprintf(`[{"nodePool":{"name":"a100"},"gpu":{"deserved":%d,"limit":12,"overQuotaWeight":3}}]`, deserved)},
		})
		p := getJSON(t, srv, path)
		pol := p["policy"].(map[string]any)
		res := items(p, "resources")
		if pol["preemptionOrder"] != order || pol["preemptionMode"] != mode || pol["queueing"] != queue ||
			len(res) != 1 || res[0]["gpu"].(map[string]any)["deserved"] != float64(deserved) {
			t.Fatalf("round %d: a parallel change was lost: policy %v, resources %v; want %s, %s, %s and deserved %d",
				round, pol, res, order, mode, queue, deserved)
		}
	}
	checkAuditChain(t, st, "project", proj, map[string]any{"preemptionOrder": "oldest", "preemptionMode": "terminate",
		"queueing": "best-effort", "resources": "a100: deserved 10, limit 12, weight 3"})
}

// TestConcurrentNodePoolUpdatesLoseNothing: the same for a node pool's four fields.
func TestConcurrentNodePoolUpdatesLoseNothing(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	pool := sendMap(t, srv, "POST", "/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool"}`, 201)["id"].(string)
	path := "/api/v1/node-pools/" + pool
	keys, placements := []string{"example.com/pool", "arbiter.dev/node-pool"}, []string{"spread", "binpack"}
	for round := range 20 {
		name, key, value, placement := fmt.Sprintf("pool-%d", round), keys[round%2], fmt.Sprintf("gpu-%d", round), placements[round%2]
		parallel(t, srv, [][3]string{
			{"PUT", path, `{"name":"` + name + `"}`},
			{"PUT", path, `{"labelKey":"` + key + `"}`},
			{"PUT", path, `{"labelValue":"` + value + `"}`},
			{"PUT", path, `{"placement":"` + placement + `"}`},
		})
		p := getJSON(t, srv, path)
		if p["name"] != name || p["labelKey"] != key || p["labelValue"] != value || p["placement"] != placement {
			t.Fatalf("round %d: a parallel change was lost: %v; want %s, %s=%s, %s", round, p, name, key, value, placement)
		}
	}
	checkAuditChain(t, st, "node-pool", pool, map[string]any{"name": "a100", "labelKey": "arbiter.dev/node-pool", "labelValue": "a100", "placement": "binpack"})
}

// TestConcurrentQuotaCellEditsLoseNothing: the console edits one node pool's quota at a time;
// parallel edits of different pools' quotas of one project and of one department all stay.
func TestConcurrentQuotaCellEditsLoseNothing(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	var pools []string
	for _, name := range []string{"p1", "p2", "p3"} {
		pools = append(pools, sendMap(t, srv, "POST", "/api/v1/node-pools", `{"name":"`+name+`","labelKey":"arbiter.dev/node-pool"}`, 201)["id"].(string))
	}
	dept := sendMap(t, srv, "POST", "/api/v1/org-unit/departments", `{"name":"research","resources":[
		{"nodePool":{"name":"p1"},"gpu":{"deserved":100}},{"nodePool":{"name":"p2"},"gpu":{"deserved":100}},{"nodePool":{"name":"p3"},"gpu":{"deserved":100}}]}`, 201)["id"].(string)
	proj := sendMap(t, srv, "POST", "/api/v1/org-unit/projects", `{"name":"alpha","departmentId":"`+dept+`"}`, 201)["id"].(string)
	for round := range 10 {
		var reqs [][3]string
		for i, pool := range pools {
			reqs = append(reqs, [3]string{"POST", "/projects/" + proj + "/quotas/" + pool, fmt.Sprintf("deserved=%d", round+i+1)})
			reqs = append(reqs, [3]string{"POST", "/departments/" + dept + "/quotas/" + pool, fmt.Sprintf("deserved=%d", 50+round+i)})
		}
		parallel(t, srv, reqs)
		for _, kind := range []string{"projects/" + proj, "departments/" + dept} {
			got := map[string]float64{}
			for _, q := range items(getJSON(t, srv, "/api/v1/org-unit/"+kind), "resources") {
				got[q["nodePool"].(map[string]any)["name"].(string)] = q["gpu"].(map[string]any)["deserved"].(float64)
			}
			for i, name := range []string{"p1", "p2", "p3"} {
				want := float64(round + i + 1)
				if strings.HasPrefix(kind, "departments") {
					want = float64(50 + round + i)
				}
				if got[name] != want {
					t.Fatalf("round %d: %s has deserved %v in %s, want %v: a parallel edit of another pool's quota was lost (%v)", round, kind, got[name], name, want, got)
				}
			}
		}
	}
	checkAuditChain(t, st, "project", proj, map[string]any{"resources": ""})
	checkAuditChain(t, st, "department", dept, map[string]any{"resources": "p1: deserved 100, limit none, weight 2; p2: deserved 100, limit none, weight 2; p3: deserved 100, limit none, weight 2"})
}
