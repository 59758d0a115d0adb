package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// fakeStatus stands in for the scheduler's live status (server.liveStatus, tested apart).
type fakeStatus struct {
	pools map[string]views.NodePoolStatus
	usage map[[3]string]views.Usage
}

func (f fakeStatus) NodePoolStatus(pool string) views.NodePoolStatus { return f.pools[pool] }
func (f fakeStatus) Usage(kind, name, pool string) views.Usage {
	return f.usage[[3]string{kind, name, pool}]
}

// overviewFigures is what the Overview shows, read from its HTML.
type overviewFigures struct {
	Tiles    map[string]int
	Projects []string // the projects with a bar, in order
	Reasons  map[string]int
}

var (
	tileRE    = regexp.MustCompile(`id="tile-([a-z-]+)"><span class="tile-label">[^<]*</span>\s*<span class="tile-value">(\d+)</span>`)
	projectRE = regexp.MustCompile(`data-project="([^"]+)"`)
	reasonRE  = regexp.MustCompile(`<li data-reason="([^"]*)" data-count="(\d+)">`)
)

func readOverview(t *testing.T, html string) overviewFigures {
	t.Helper()
	f := overviewFigures{Tiles: map[string]int{}, Reasons: map[string]int{}}
	for _, m := range tileRE.FindAllStringSubmatch(html, -1) {
		f.Tiles[m[1]], _ = strconv.Atoi(m[2])
	}
	if len(f.Tiles) != 8 {
		t.Fatalf("the Overview shows %d tiles, want 8: %.2000s", len(f.Tiles), html)
	}
	for _, m := range projectRE.FindAllStringSubmatch(html, -1) {
		f.Projects = append(f.Projects, m[1])
	}
	for _, m := range reasonRE.FindAllStringSubmatch(html, -1) {
		f.Reasons[m[1]], _ = strconv.Atoi(m[2])
	}
	return f
}

// apiFigures is what the API says the Overview's figures are, for the caller with token.
func apiFigures(t *testing.T, srv *httptest.Server, token string, preemptions, reclaims int) overviewFigures {
	t.Helper()
	getAsKey := func(path string) []byte {
		r := doAs(t, srv, token, "GET", path, "", "")
		if r.status != 200 {
			t.Fatalf("GET %s = %d %s", path, r.status, r.body)
		}
		return r.body
	}
	f := overviewFigures{Tiles: map[string]int{"preemptions": preemptions, "reclaims": reclaims}, Reasons: map[string]int{}}
	for _, p := range arbiterPools(decodeList[views.NodePoolAnswer](t, getAsKey("/api/v1/node-pools"), "nodePools").Items) {
		f.Tiles["nodes-ready"] += p.Status.ReadyNodes
		f.Tiles["gpus-total"] += p.Status.GPUs
		f.Tiles["gpus-allocated"] += p.Status.AllocatedGPUs
	}
	f.Tiles["gpus-free"] = f.Tiles["gpus-total"] - f.Tiles["gpus-allocated"]
	running := decodeList[views.Workload](t, getAsKey("/api/v1/workloads?filterBy=phase==Running&limit=500"), "workloads").Items
	waiting := decodeList[views.Workload](t, getAsKey("/api/v1/workloads?filterBy=waiting==true&limit=500"), "workloads").Items
	f.Tiles["running"], f.Tiles["pending"] = len(running), len(waiting)
	for _, w := range waiting {
		f.Reasons[w.Reason]++
	}
	for _, p := range decodeList[views.Project](t, getAsKey("/api/v1/org-unit/projects?limit=500"), "projects").Items {
		f.Projects = append(f.Projects, p.Name)
	}
	return f
}

// TestOverviewMatchesAPI: the Overview's figures equal the API's — node pools' status, workload
// counts running and waiting, waiting by reason, the projects — for an admin and for a project viewer; the
// preemptions and reclaims of the last 24 hours count, older ones do not.
func TestOverviewMatchesAPI(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	status := fakeStatus{
		pools: map[string]views.NodePoolStatus{"default": {Nodes: 3, ReadyNodes: 2, GPUs: 24, AllocatedGPUs: 10}, "a100": {Nodes: 2, ReadyNodes: 2, GPUs: 16, AllocatedGPUs: 16}},
		usage: map[[3]string]views.Usage{
			{"project", "alpha", "default"}: {Allocated: 6, AllocatedNonPreemptible: 2, Borrowed: 2, RunningWorkloads: 2},
			{"project", "beta", "a100"}:     {Allocated: 16, AllocatedNonPreemptible: 8, RunningWorkloads: 1},
		},
	}
	d := deps(st)
	d.Workloads, d.OrgStatus = st, status
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	admin := newAPIKey(t, st, "admin", "system", "")
	signIn(srv, admin)

	create(t, srv, "/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool","labelValue":"a100"}`)
	research := create(t, srv, "/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":20}},{"nodePool":{"name":"a100"},"gpu":{"deserved":16}}]}`)
	project := func(name, pool string, deserved int) string {
		return create(t, srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":%q,"departmentId":%q,"resources":[{"nodePool":{"name":%q},"gpu":{"deserved":%d}}]}`, name, research, pool, deserved))
	}
	alpha := project("alpha", "default", 4)
	project("beta", "a100", 16)

	now := time.Now()
	var records []store.WorkloadRecord
	var events []store.WorkloadEvent
	add := func(project, phase, reason string) string {
		uid := uuid.NewString()
		records = append(records, store.WorkloadRecord{UID: uid, Namespace: "team-" + project, Name: "w-" + uid[:8], Kind: "Job",
			APIGroup: "batch", TypeName: "Job", ProjectName: project, DepartmentName: "research", PriorityName: "low",
			PriorityValue: 40, Preemptibility: "preemptible", Phase: phase, Reason: reason, Gang: 1, QueuedAt: now.Add(-time.Hour)})
		return uid
	}
	a1, a2 := add("alpha", "Running", ""), add("alpha", "Running", "")
	add("alpha", "Pending", "InsufficientCapacity")
	add("alpha", "Pending", "")
	b1 := add("beta", "Running", "")
	add("beta", "Pending", "InsufficientCapacity")
	add("beta", "Pending", "OverQuota")
	add("beta", "Suspended", "")
	done := add("beta", "Completed", "")
	records[len(records)-1].FinishedAt = &now
	events = append(events,
		store.WorkloadEvent{WorkloadUID: a1, At: now.Add(-time.Hour), Kind: "Preempted"},
		store.WorkloadEvent{WorkloadUID: a2, At: now.Add(-2 * time.Hour), Kind: "Reclaimed"},
		store.WorkloadEvent{WorkloadUID: b1, At: now.Add(-30 * time.Minute), Kind: "Preempted"},
		store.WorkloadEvent{WorkloadUID: b1, At: now.Add(-30 * time.Hour), Kind: "Preempted"}, // older than a day
		store.WorkloadEvent{WorkloadUID: done, At: now.Add(-time.Hour), Kind: "Reclaimed"},    // finished workloads' events count too
	)
	if err := st.RecordWorkloads(context.Background(), withProjectIDs(t, st, records), events); err != nil {
		t.Fatal(err)
	}

	alphaViewer := newAPIKey(t, st, "viewer", "project", alpha)
	for _, tc := range []struct {
		who, token            string
		preemptions, reclaims int
	}{{"admin", admin, 2, 2}, {"alpha viewer", alphaViewer, 1, 1}} {
		want := apiFigures(t, srv, tc.token, tc.preemptions, tc.reclaims)
		for _, path := range []string{"/", "/overview/live"} {
			r := doAs(t, srv, tc.token, "GET", path, "", "")
			if r.status != 200 {
				t.Fatalf("%s GET %s = %d %s", tc.who, path, r.status, r.body)
			}
			if diff := cmp.Diff(want, readOverview(t, string(r.body))); diff != "" {
				t.Errorf("%s: the Overview at %s differs from the API (-api +page):\n%s", tc.who, path, diff)
			}
		}
	}
	// The figures the test expects, so that a wrong API and page cannot agree on nothing.
	page := readOverview(t, string(get(t, srv, "/").body))
	wantTiles := map[string]int{"nodes-ready": 4, "gpus-total": 40, "gpus-allocated": 26, "gpus-free": 14,
		"running": 3, "pending": 4, "preemptions": 2, "reclaims": 2}
	if diff := cmp.Diff(wantTiles, page.Tiles); diff != "" {
		t.Errorf("admin's tiles (-want +got):\n%s", diff)
	}
	if html := string(get(t, srv, "/").body); !regexp.MustCompile(`aria-label="alpha: 6 of 4 deserved GPUs allocated, over quota by 2 GPUs; 2 non-preemptible"`).MatchString(html) {
		t.Errorf("alpha's bar is not described as allocated 6 of 4, over quota by 2, 2 non-preemptible")
	}
}

// TestOverviewWithoutCluster: without a scheduler the Overview shows zeros and says so.
func TestOverviewWithoutCluster(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	d := deps(st)
	d.Workloads = st
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "viewer", "system", ""))
	html := string(get(t, srv, "/").body)
	f := readOverview(t, html)
	for k, v := range f.Tiles {
		if v != 0 {
			t.Errorf("tile %s = %d without a cluster, want 0", k, v)
		}
	}
	if !regexp.MustCompile(`No cluster connected`).MatchString(html) {
		t.Errorf("the Overview does not say that no cluster is connected")
	}
}
