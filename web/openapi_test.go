package web_test

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/web"
)

// TestOpenAPIMatchesRouter fails when a route is missing from /api/v1/openapi.json or the
// document names a route the router does not have.
func TestOpenAPIMatchesRouter(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(do(t, srv, "GET", "/api/v1/openapi.json", "", "").body, &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	param := regexp.MustCompile(`:([A-Za-z]+)`)
	routed := map[string]bool{}
	for _, r := range web.New(web.Deps{}).Routes() {
		if strings.HasPrefix(r.Path, "/api/") { // /api/v2/token too
			routed[r.Method+" "+param.ReplaceAllString(r.Path, "{$1}")] = true
		}
	}
	var missing, extra []string
	for k := range routed {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	for k := range documented {
		if !routed[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes not in openapi.json: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("openapi.json documents routes the router lacks: %v", extra)
	}
	if len(routed) < 9 {
		t.Errorf("only %d API routes found; the router walk is broken", len(routed))
	}
}
