package web_test

import (
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

var cellProjectRE = regexp.MustCompile(`\(project ([^,]+),`)

// swatchOf is an element's colour and pattern classes (gpu-c…, gpu-p…), as one string.
func swatchOf(n *html.Node) string {
	var cls []string
	for c := range strings.FieldsSeq(attr(n, "class")) {
		if strings.HasPrefix(c, "gpu-c") || strings.HasPrefix(c, "gpu-p") {
			cls = append(cls, c)
		}
	}
	slices.Sort(cls)
	return strings.Join(cls, " ")
}

// gridSwatches reads, from the Nodes page, each named project's swatch in the grid and in the
// legend; a project whose cells differ among themselves fails the test.
func gridSwatches(t *testing.T, body []byte) (cells, legend map[string]string) {
	t.Helper()
	doc := parseHTML(t, body)
	cells, legend = map[string]string{}, map[string]string{}
	for _, li := range findAll(doc, func(n *html.Node) bool { return n.Data == "li" && strings.Contains(attr(n, "class"), "gpu-held") }) {
		m := cellProjectRE.FindStringSubmatch(attr(li, "title"))
		if m == nil {
			t.Fatalf("a held cell names no project: %q", attr(li, "title"))
		}
		s := swatchOf(li)
		if prev, ok := cells[m[1]]; ok && prev != s {
			t.Errorf("project %s's cells differ: %q and %q", m[1], prev, s)
		}
		cells[m[1]] = s
	}
	list := findNode(doc, func(n *html.Node) bool { return strings.Contains(attr(n, "class"), "gpu-legend") })
	for _, li := range findAll(list, func(n *html.Node) bool { return n.Data == "li" }) {
		sw := findNode(li, func(n *html.Node) bool { return strings.Contains(attr(n, "class"), "swatch") })
		if s := swatchOf(sw); s != "" {
			legend[strings.TrimSpace(textOf(li))] = s
		}
	}
	return cells, legend
}

// TestNodesGridTellsProjectsShownTogetherApart: ads, search and vision — three projects whose
// names hashed to one green — hold GPUs on the same nodes. Each has a colour and pattern of its
// own, the legend shows the same, and each keeps it on a reload, filtered by pool or project, and
// for a viewer who may read only one of them.
func TestNodesGridTellsProjectsShownTogetherApart(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	d := deps(st)
	d.Workloads = st
	cycles := &fakeCycles{}
	d.Cycles = cycles
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	dept := create(t, srv, "/api/v1/org-unit/departments", `{"name":"research"}`)
	ids := map[string]string{}
	names := []string{"ads", "search", "vision", "speech", "robotics"}
	for _, p := range names {
		ids[p] = create(t, srv, "/api/v1/org-unit/projects", `{"name":"`+p+`","departmentId":"`+dept+`"}`)
	}

	snap := &scheduler.Snapshot{NodePools: []scheduler.NodePool{{Name: "a100", LabelKey: "pool", LabelValue: "a100"}}}
	plan := &scheduler.Plan{}
	for i, node := range []string{"gpu-1", "gpu-2"} {
		labels := map[string]string{}
		if i == 0 {
			labels["pool"] = "a100"
		}
		snap.Nodes = append(snap.Nodes, scheduler.Node{Name: node, Labels: labels, Ready: true, Allocatable: scheduler.Resources{GPUs: 8}})
	}
	for _, p := range names {
		snap.Projects = append(snap.Projects, scheduler.Project{Name: p})
		for _, node := range []string{"gpu-1", "gpu-2"} {
			uid := p + "-" + node
			snap.Workloads = append(snap.Workloads, scheduler.Workload{UID: uid, Namespace: "ml", Name: uid, Project: p,
				Pods: []scheduler.Pod{{UID: uid, Namespace: "ml", Name: uid + "-0", NodeName: node, Requests: scheduler.Resources{GPUs: 1}}}})
			plan.Running = append(plan.Running, scheduler.RunningWorkload{Workload: uid, Priority: scheduler.Priority{Name: "low"}, Preemptibility: scheduler.Preemptible})
		}
	}
	cycles.snap, cycles.plan = snap, plan

	cells, legend := gridSwatches(t, get(t, srv, "/nodes").body)
	if len(cells) != len(names) {
		t.Fatalf("the grid names %d projects, want %d: %v", len(cells), len(names), cells)
	}
	if diff := cmp.Diff(cells, legend); diff != "" {
		t.Errorf("the legend's swatches differ from the cells' (-cells +legend):\n%s", diff)
	}
	colours := map[string]string{}
	for p, s := range cells {
		c := strings.Fields(s)[0]
		if other, ok := colours[c]; ok {
			t.Errorf("projects %s and %s, shown together, share colour %s", other, p, c)
		}
		colours[c] = p
		if !strings.Contains(s, "gpu-p") {
			t.Errorf("project %s's cells have no pattern class, for those who do not tell its colour apart: %q", p, s)
		}
	}

	for _, path := range []string{"/nodes", "/nodes?pool=a100", "/nodes?project=search", "/nodes?project=vision&pool=a100"} {
		again, _ := gridSwatches(t, get(t, srv, path).body)
		for p, s := range again {
			if s != cells[p] {
				t.Errorf("at %s project %s is %q, on the whole grid %q", path, p, s, cells[p])
			}
		}
	}
	viewer := newAPIKey(t, st, "viewer", "project", ids["vision"])
	r := doAs(t, srv, viewer, "GET", "/nodes", "", "")
	if r.status != 200 {
		t.Fatalf("a viewer of vision: GET /nodes = %d", r.status)
	}
	if seen, _ := gridSwatches(t, r.body); len(seen) != 1 || seen["vision"] != cells["vision"] {
		t.Errorf("a viewer of vision sees %v; the admin sees vision as %q", seen, cells["vision"])
	}
}
