package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"golang.org/x/net/html"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
)

// TestFairnessLedgerSaysWhoReclaimedTheShortfall: for two hours alpha (fair share 6) held 2
// GPUs and asked for 4 more, because its 4-GPU training was reclaimed by beta's work and
// waited to come back. Its ledger, in the API and on its page, says it was entitled to 12
// GPU-hours, received 4, and fell 8 short, reclaimed by beta.
func TestFairnessLedgerSaysWhoReclaimedTheShortfall(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	d := deps(st)
	d.Usage, d.Workloads = st, st
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	ctx := context.Background()
	dept := create(t, srv, "/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":16}}]}`)
	project := func(name string) string {
		return create(t, srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":%q,"departmentId":%q,"resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":4}}]}`, name, dept))
	}
	alpha, beta := project("alpha"), project("beta")

	now := time.Now().UTC().Truncate(10 * time.Minute)
	start := now.Add(-2 * time.Hour)
	for at := start; at.Before(now); at = at.Add(10 * time.Minute) {
		sample := store.UsageSample{At: at, Interval: 10 * time.Minute, Pools: []store.PoolUsage{{NodePool: "default", CapacityGPUs: 16,
			Projects: []store.ProjectUsage{
				{ProjectID: uuid.MustParse(alpha), DepartmentID: uuid.MustParse(dept), Preemptible: 2, Pending: 4, Deserved: 4, FairShare: 6},
				{ProjectID: uuid.MustParse(beta), DepartmentID: uuid.MustParse(dept), Preemptible: 4, Borrowed: 10, Deserved: 4, FairShare: 10},
			}}}}
		if _, err := st.RecordUsageSample(ctx, sample); err != nil {
			t.Fatal(err)
		}
	}
	job := func(uid, project string) store.WorkloadRecord {
		return store.WorkloadRecord{UID: uid, Namespace: "team-" + project, Name: uid, Kind: "Job", APIGroup: "batch",
			ProjectName: project, Phase: "Running", Gang: 1, RequestedGPUs: 4, QueuedAt: start.Add(-time.Hour)}
	}
	train, thief := job("train", "alpha"), job("thief", "beta")
	train.Phase = "Preempted"
	events := []store.WorkloadEvent{
		{WorkloadUID: "train", Kind: "Admitted", At: start.Add(-time.Hour)},
		{WorkloadUID: "train", Kind: "Reclaimed", At: start, PreemptorUID: "thief", Reason: "S17"},
		{WorkloadUID: "thief", Kind: "Admitted", At: start},
	}
	if err := st.RecordWorkloads(ctx, withProjectIDs(t, st, []store.WorkloadRecord{train, thief}), events); err != nil {
		t.Fatal(err)
	}

	path := "/api/v1/arbiter/projects/" + alpha + "/fairness-ledger?from=" + start.Add(-time.Hour).Format(time.RFC3339) + "&to=" + now.Format(time.RFC3339)
	var got views.FairnessLedger
	if err := json.Unmarshal(get(t, srv, path).body, &got); err != nil {
		t.Fatal(err)
	}
	want := []views.FairnessLedgerPool{{NodePool: "default",
		LedgerFigures: views.LedgerFigures{Deserved: 8, FairShare: 12, Entitled: 12, Received: 4, Shortfall: 8, RecordedHours: 2},
		Shortfalls:    []views.LedgerShortfall{{Cause: "ReclaimedBy", By: "beta", GPUHours: 8, Words: "reclaimed by beta (within its deserved quota)"}}}}
	if diff := cmp.Diff(want, got.Pools); diff != "" {
		t.Errorf("alpha's ledger (-want +got):\n%s", diff)
	}
	wantSummary := "alpha was entitled to 12.0 GPU-hours (its fair share, capped by what it asked for) and received 4.0. " +
		"It fell short by 8.0 GPU-hours: 8.0 reclaimed by beta (within its deserved quota)."
	if got.Summary != wantSummary {
		t.Errorf("summary %q\nwant     %q", got.Summary, wantSummary)
	}

	page := parseHTML(t, get(t, srv, "/projects/"+alpha+"?range=24h").body)
	summary := findNode(page, func(n *html.Node) bool { return attr(n, "class") == "ledger-summary" })
	if summary == nil || textOf(summary) != wantSummary {
		t.Errorf("the project page's ledger says %q, want the API's %q", textOf(summary), wantSummary)
	}
	cause := findNode(page, func(n *html.Node) bool { return attr(n, "data-cause") == "ReclaimedBy" })
	if cause == nil || !strings.Contains(textOf(cause), "8.0: reclaimed by beta") {
		t.Errorf("the page's ledger table does not put 8.0 GPU-hours down to beta's reclaim")
	}
}
