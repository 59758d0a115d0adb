package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"golang.org/x/net/html"
)

// waitingShown is what the Overview says about waiting work, read from its HTML.
type waitingShown struct {
	Tile    int
	Reasons []reasonShown
}

type reasonShown struct {
	Reason   string // the scheduler's code; "" when none is given yet
	Count    int
	Words    string // what the page says it means
	Projects []projectShown
}

type projectShown struct {
	Project string
	Count   int
}

func parseHTML(t *testing.T, body []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func readWaiting(t *testing.T, doc *html.Node) waitingShown {
	t.Helper()
	var w waitingShown
	tile := findNode(doc, func(n *html.Node) bool { return attr(n, "id") == "tile-pending" })
	if tile == nil {
		t.Fatal("the Overview has no pending tile")
	}
	value := findNode(tile, func(n *html.Node) bool { return attr(n, "class") == "tile-value" })
	w.Tile, _ = strconv.Atoi(strings.TrimSpace(textOf(value)))
	for _, li := range findAll(doc, func(n *html.Node) bool { return n.Data == "li" && hasAttr(n, "data-reason") }) {
		r := reasonShown{Reason: attr(li, "data-reason")}
		r.Count, _ = strconv.Atoi(attr(li, "data-count"))
		if words := findNode(li, func(n *html.Node) bool { return attr(n, "class") == "reason-words" }); words != nil {
			r.Words = strings.TrimSpace(textOf(words))
		}
		for _, a := range findAll(li, func(n *html.Node) bool { return hasAttr(n, "data-reason-project") }) {
			n, _ := strconv.Atoi(attr(a, "data-count"))
			r.Projects = append(r.Projects, projectShown{attr(a, "data-reason-project"), n})
		}
		w.Reasons = append(w.Reasons, r)
	}
	return w
}

// overviewLinks are the Overview's links, named by what they stand on: "tile <id>",
// "reason <code>", "reason <code> project <name>", "project <name>", "pool <name>".
func overviewLinks(doc *html.Node) map[string]string {
	out := map[string]string{}
	live := findNode(doc, func(n *html.Node) bool { return attr(n, "id") == "overview-live" })
	for _, a := range findAll(live, func(n *html.Node) bool { return n.Data == "a" }) {
		var name string
		for p := a; p != nil && name == ""; p = p.Parent {
			switch {
			case hasAttr(p, "data-reason-project"):
				name = "project " + attr(p, "data-reason-project")
				for q := p.Parent; q != nil; q = q.Parent {
					if hasAttr(q, "data-reason") {
						name = "reason " + orDefault(attr(q, "data-reason"), "none") + " " + name
						break
					}
				}
			case hasAttr(p, "data-reason"):
				name = "reason " + orDefault(attr(p, "data-reason"), "none")
			case strings.HasPrefix(attr(p, "id"), "tile-"):
				name = "tile " + strings.TrimPrefix(attr(p, "id"), "tile-")
			case hasAttr(p, "data-project"):
				name = "project " + attr(p, "data-project")
			case hasAttr(p, "data-pool"):
				name = "pool " + attr(p, "data-pool")
			}
		}
		if name != "" {
			out[name] = attr(a, "href")
		}
	}
	return out
}

// TestOverviewCountsEveryWaitingWorkload: seven workloads wait with queue positions — pending,
// preempted and suspended by Arbiter until admitted — and the Overview counts all seven, in
// its tile and by reason, naming the projects behind each reason; a Job its owner stopped
// does not wait and is not counted. A project's bar says in words how far it is over quota.
// Every tile, reason, project and bar links to the Workloads view, whose filters list exactly
// the workloads the figure counts.
func TestOverviewCountsEveryWaitingWorkload(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	status := fakeStatus{
		pools: map[string]views.NodePoolStatus{"default": {Nodes: 2, ReadyNodes: 2, GPUs: 16, AllocatedGPUs: 9}},
		usage: map[[3]string]views.Usage{
			{"project", "alpha", "default"}: {Allocated: 6, Borrowed: 2, RunningWorkloads: 1},
			{"project", "beta", "default"}:  {Allocated: 3, RunningWorkloads: 2},
		},
	}
	d := deps(st)
	d.Workloads, d.OrgStatus = st, status
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))

	dept := create(t, srv, "/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":16}}]}`)
	for name, deserved := range map[string]int{"alpha": 4, "beta": 4, "gamma": 4} {
		create(t, srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":%q,"departmentId":%q,"resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":%d}}]}`, name, dept, deserved))
	}

	now := time.Now()
	var records []store.WorkloadRecord
	add := func(project, phase, reason string, position int) *store.WorkloadRecord {
		uid := uuid.NewString()
		records = append(records, store.WorkloadRecord{UID: uid, Namespace: "team-" + project, Name: "w-" + uid[:8], Kind: "Job",
			APIGroup: "batch", TypeName: "Job", ProjectName: project, DepartmentName: "research", PriorityName: "low",
			PriorityValue: 40, Preemptibility: "preemptible", Phase: phase, Reason: reason, QueuePosition: position, Gang: 1,
			RequestedGPUs: 2, QueuedAt: now.Add(-time.Hour)})
		return &records[len(records)-1]
	}
	add("alpha", "Pending", "InsufficientCapacity", 1)
	add("alpha", "Pending", "InsufficientCapacity", 2)
	add("beta", "Pending", "OverLimit", 1)
	add("alpha", "Preempted", "InsufficientCapacity", 3) // evicted, waiting to come back
	add("beta", "Preempted", "", 2)                      // evicted, no reason given yet
	add("gamma", "Suspended", "InsufficientCapacity", 1) // suspended by Arbiter until admitted
	add("gamma", "Suspended", "NonPreemptibleOverQuota", 2)
	add("gamma", "Suspended", "", 0) // stopped by its owner: it waits for nobody
	for _, p := range []string{"alpha", "beta", "beta"} {
		r := add(p, "Running", "", 0)
		r.NodePool, r.AllocatedGPUs = "default", 2
	}
	done := add("beta", "Completed", "", 0)
	done.FinishedAt = &now
	if err := st.RecordWorkloads(context.Background(), records, nil); err != nil {
		t.Fatal(err)
	}

	doc := parseHTML(t, get(t, srv, "/").body)
	want := waitingShown{Tile: 7, Reasons: []reasonShown{
		{Reason: "InsufficientCapacity", Count: 4, Words: "Not enough free GPUs", Projects: []projectShown{{"alpha", 3}, {"gamma", 1}}},
		{Reason: "", Count: 1, Words: "No reason given yet", Projects: []projectShown{{"beta", 1}}},
		{Reason: "NonPreemptibleOverQuota", Count: 1, Words: "Non-preemptible work beyond the project's deserved quota", Projects: []projectShown{{"gamma", 1}}},
		{Reason: "OverLimit", Count: 1, Words: "The project is at its GPU limit", Projects: []projectShown{{"beta", 1}}},
	}}
	if diff := cmp.Diff(want, readWaiting(t, doc)); diff != "" {
		t.Errorf("waiting work on the Overview (-want +got):\n%s", diff)
	}

	alpha := findNode(doc, func(n *html.Node) bool { return attr(n, "data-project") == "alpha" })
	if alpha == nil || !strings.Contains(strings.Join(strings.Fields(textOf(alpha)), " "), "over quota by 2 GPUs") {
		t.Errorf("alpha's bar does not say it is over quota by 2 GPUs: %q", textOf(alpha))
	}
	beta := findNode(doc, func(n *html.Node) bool { return attr(n, "data-project") == "beta" })
	if beta == nil || !strings.Contains(textOf(beta), "within quota") {
		t.Errorf("beta's bar does not say it is within quota: %q", textOf(beta))
	}

	// Each link leads to the Workloads view, whose rows are the workloads its figure counts.
	rows := map[string]int{}
	for name, href := range overviewLinks(doc) {
		if !strings.HasPrefix(href, "/workloads") {
			continue
		}
		page := parseHTML(t, get(t, srv, href).body)
		rows[name] = len(findAll(page, func(n *html.Node) bool {
			return n.Data == "tr" && strings.Contains(attr(n, "class"), "workload-row")
		}))
	}
	wantRows := map[string]int{
		"tile running": 3, "tile pending": 7,
		"reason InsufficientCapacity": 4, "reason InsufficientCapacity project alpha": 3, "reason InsufficientCapacity project gamma": 1,
		"reason none": 1, "reason none project beta": 1,
		"reason NonPreemptibleOverQuota": 1, "reason NonPreemptibleOverQuota project gamma": 1,
		"reason OverLimit": 1, "reason OverLimit project beta": 1,
		"project alpha": 4, "project beta": 4, "project gamma": 3, // unfinished: waiting, running, stopped
		"pool default": 3, // running in the pool
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("rows of the Workloads view each Overview link leads to (-want +got):\n%s", diff)
	}
}
