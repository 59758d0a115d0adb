package web_test

import (
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/store"
)

// TestDefaultPoolAnswersItsLabel: Run:ai requires every node pool's labelKey and labelValue.
// The default pool holds every node no other pool selects; Arbiter answers it as selecting
// arbiter.dev/node-pool=default, and makes that true: a node so labelled is in the default
// pool, no other pool may select that label, and a client that sends the pool back as it read
// it changes nothing.
func TestDefaultPoolAnswersItsLabel(t *testing.T) {
	t.Parallel()
	srv, _, _, _, _ := orgAPI(t)
	path := "/api/v1/node-pools/" + store.DefaultNodePoolID.String()
	pool := jsonBody(t, do(t, srv, "GET", path, "", ""))
	if pool["labelKey"] != store.NodePoolLabelKey || pool["labelValue"] != "default" {
		t.Fatalf("the default pool answers label %v=%v, want %s=default", pool["labelKey"], pool["labelValue"], store.NodePoolLabelKey)
	}
	listed, _ := jsonBody(t, do(t, srv, "GET", "/api/v1/node-pools?filterBy=labelValue==default", "", ""))["nodepools"].([]any)
	if len(listed) != 1 || listed[0].(map[string]any)["name"] != "default" {
		t.Errorf("the pools filtered by labelValue==default are %v, want the default pool", listed)
	}
	if r := do(t, srv, "PUT", path, "application/json", `{"name":"default","labelKey":"arbiter.dev/node-pool","labelValue":"default","placement":"binpack"}`); r.status != 200 {
		t.Errorf("PUT of the default pool as read = %d %s, want 200", r.status, r.body)
	}
	for _, c := range []struct{ what, method, path, body string }{
		{"the default pool on another label", "PUT", path, `{"labelKey":"arbiter.dev/node-pool","labelValue":"a10"}`},
		{"another pool on the default pool's label", "POST", "/api/v1/node-pools", `{"name":"spare","labelKey":"arbiter.dev/node-pool","labelValue":"default"}`},
	} {
		r := do(t, srv, c.method, c.path, "application/json", c.body)
		msg, _ := jsonBody(t, r)["message"].(string)
		if r.status != 400 || !strings.HasPrefix(msg, "label") || !strings.Contains(msg, "default") {
			t.Errorf("%s: %d %s, want a 400 naming the label and the default pool", c.what, r.status, r.body)
		}
	}
}
