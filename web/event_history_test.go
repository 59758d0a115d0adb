package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

// tableRows is the text of each body row of the table with id, a string per cell.
func tableRows(t *testing.T, doc *html.Node, id string) [][]string {
	t.Helper()
	table := byID(doc, id)
	if table == nil {
		t.Fatalf("no table #%s", id)
	}
	tbody := findNode(table, func(n *html.Node) bool { return n.Data == "tbody" })
	var rows [][]string
	for tr := tbody.FirstChild; tr != nil; tr = tr.NextSibling {
		if tr.Type != html.ElementNode || tr.Data != "tr" {
			continue
		}
		var cells []string
		for td := tr.FirstChild; td != nil; td = td.NextSibling {
			if td.Type == html.ElementNode && td.Data == "td" {
				cells = append(cells, words(td))
			}
		}
		rows = append(rows, cells)
	}
	return rows
}

// TestEventHistorySchedulingEvents: the scheduling tab lists Preempted, Reclaimed, Suspended,
// Resumed and PriorityChanged events of the workloads the caller may see, newest first,
// filtered by kind, project and workload, naming and linking the preemptor.
func TestEventHistorySchedulingEvents(t *testing.T) {
	t.Parallel()
	f, victim := storyFixture(t)
	admin := tokenOf(f.srv)
	const (
		reclaimed = "2025-03-01 09:05:00"
		changed   = "2025-03-01 09:04:00"
		preempted = "2025-03-01 09:03:00"
	)
	reclaimRow := []string{reclaimed, "Reclaimed S17", "beta", "team-beta/beta-job",
		"Preempted by team-gamma/gamma-job under S17 (another project reclaiming its deserved quota); 2 GPUs freed; exit code 3006 (preemptor: team-gamma/gamma-job)"}
	changeRow := []string{changed, "PriorityChanged", "alpha", "team-alpha/victim", "Changed priority from low to medium by Ada."}
	preemptRow := []string{preempted, "Preempted S16", "alpha", "team-alpha/victim",
		"Preempted by team-alpha/train-b under S16 (a higher-priority workload of the same project); 2 GPUs freed; exit code 3006 (preemptor: team-alpha/train-b)"}
	for _, tc := range []struct {
		name, token, query string
		want               [][]string
	}{
		{"all, newest first (Queued and Admitted are not scheduling events)", admin, "", [][]string{reclaimRow, changeRow, preemptRow}},
		{"by kind", admin, "&kind=Reclaimed", [][]string{reclaimRow}},
		{"by project", admin, "&project=alpha", [][]string{changeRow, preemptRow}},
		{"by part of a workload's name", admin, "&workload=VICT", [][]string{changeRow, preemptRow}},
		{"by a workload's id", admin, "&workload=" + f.betaJob, [][]string{reclaimRow}},
		{"by kind and project: none", admin, "&kind=Suspended&project=alpha", [][]string{{"No scheduling events match these filters."}}},
		{"an alpha viewer sees alpha's only", newAPIKey(t, f.st, "viewer", "project", f.alpha), "", [][]string{changeRow, preemptRow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := page(t, f.srv, tc.token, "/event-history?tab=scheduling"+tc.query, 200)
			if diff := cmp.Diff(tc.want, tableRows(t, doc, "scheduling-table")); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
	// Workloads and preemptors link to their stories; a preemptor the caller may not read does not.
	doc := page(t, f.srv, admin, "/event-history?tab=scheduling", 200)
	want := []string{"/workloads/" + f.betaJob, "/workloads/" + f.gammaJob, "/workloads/" + victim, "/workloads/" + victim, "/workloads/" + f.trainB}
	if diff := cmp.Diff(want, links(byID(doc, "scheduling-table"))); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	deptAdmin := newAPIKey(t, f.st, "department-admin", "department", f.research)
	doc = page(t, f.srv, deptAdmin, "/event-history?tab=scheduling&kind=Reclaimed", 200)
	if diff := cmp.Diff([]string{"/workloads/" + f.betaJob}, links(byID(doc, "scheduling-table"))); diff != "" {
		t.Errorf("a department admin of research: links (-want +got):\n%s", diff)
	}
	if r := doAs(t, f.srv, admin, "GET", "/event-history?tab=scheduling&kind=Queued", "", ""); r.status != 400 || !strings.Contains(string(r.body), "kind &#34;Queued&#34; is not a scheduling event") {
		t.Errorf("kind=Queued = %d %.400s", r.status, r.body)
	}
}

// TestEventHistoryShowsChangesFromTo: the audit log shows a change as "field: from → to", one
// line per field, not as JSON.
func TestEventHistoryShowsChangesFromTo(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	send(t, f.srv, "PATCH", "/api/v1/workloads/"+f.trainA, `{"priority":"high","preemptibility":"non-preemptible"}`, 200)
	doc := page(t, f.srv, tokenOf(f.srv), "/event-history?entityType=workload", 200)
	rows := tableRows(t, doc, "audit-table")
	if len(rows) != 1 {
		t.Fatalf("audit rows about workloads: %q", rows)
	}
	if got, want := rows[0][6], "preemptibility: preemptible → non-preemptible priority: low → high"; got != want {
		t.Errorf("changes read %q, want %q", got, want)
	}
	changes := findNode(byID(doc, "audit-table"), func(n *html.Node) bool { return attr(n, "class") == "td changes" })
	var lines []string
	for c := changes.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			lines = append(lines, words(c))
		}
	}
	if diff := cmp.Diff([]string{"preemptibility: preemptible → non-preemptible", "priority: low → high"}, lines); diff != "" {
		t.Errorf("one line per field (-want +got):\n%s", diff)
	}
	// The scheduling tab shows the same change as events, one of each kind, by whom (newest
	// first: the two share their time, and preemptibility was written second).
	doc = page(t, f.srv, tokenOf(f.srv), "/event-history?tab=scheduling&workload=train-a", 200)
	rows = tableRows(t, doc, "scheduling-table")
	if len(rows) != 2 || rows[0][1] != "PreemptibilityChanged" || !strings.Contains(rows[0][4], "preemptibility from preemptible to non-preemptible") ||
		rows[1][1] != "PriorityChanged" || !strings.Contains(rows[1][4], "priority from low to high") {
		t.Errorf("scheduling rows: %q", rows)
	}
}

// TestEventHistoryNamesAPIKeys: a change made with an API key is shown in the audit log under
// the key's name, with the key's id beside it (and in the cell's title); once the key is
// revoked its rows still name it. A subject that is no key's stays its id.
func TestEventHistoryNamesAPIKeys(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	key := newAPIKey(t, f.st, "admin", "system", "")
	if r := doAs(t, f.srv, key, "PATCH", "/api/v1/workloads/"+f.trainA, "application/json", `{"priority":"high"}`); r.status != 200 {
		t.Fatalf("PATCH with the key = %d: %s", r.status, r.body)
	}
	id, _, _ := auth.ParseAPIKey(key)
	keys, err := f.st.APIKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var k store.APIKey
	for _, x := range keys {
		if x.ID == id {
			k = x
		}
	}
	if err := f.st.RecordAudit(context.Background(), store.AuditEntry{Subject: "0b7f2c1e-0000-4000-8000-000000000000", SubjectType: "api-key",
		Action: "create", EntityType: "token", Result: "denied", HTTPStatus: 401}); err != nil {
		t.Fatal(err)
	}
	subjectCell := func(doc *html.Node) (text, title string) {
		for _, tr := range findAll(byID(doc, "audit-table"), func(n *html.Node) bool { return n.Data == "tr" && attr(n, "class") == "audit-row" }) {
			cells := findAll(tr, func(n *html.Node) bool { return n.Data == "td" })
			if len(cells) > 3 && strings.Contains(textOf(cells[3]), "workload") {
				return words(cells[1]), attr(cells[1], "title")
			}
		}
		t.Fatal("no audit row of the workload's change")
		return "", ""
	}
	for _, revoked := range []bool{false, true} {
		if revoked {
			if err := f.st.RevokeAPIKey(context.Background(), k.ID, store.Actor{Subject: "test", SubjectType: "system"}); err != nil {
				t.Fatal(err)
			}
		}
		doc := page(t, f.srv, tokenOf(f.srv), "/event-history", 200)
		text, title := subjectCell(doc)
		if !strings.HasPrefix(text, k.Name+" api-key") || !strings.HasSuffix(text, k.ID.String()[:8]+"…") || title != "API key "+k.ID.String() {
			t.Errorf("revoked %v: the change's subject reads %q (title %q), want the key's name %s, then the start of its id (the whole id in the title)", revoked, text, title, k.Name)
		}
		if !strings.Contains(words(byID(doc, "audit-table")), "0b7f2c1e-0000-4000-8000-000000000000 api-key") {
			t.Errorf("revoked %v: an id that is no key's is not shown as it is", revoked)
		}
	}
	// The API answers the subject as recorded.
	if r := doAs(t, f.srv, tokenOf(f.srv), "GET", "/api/v1/audit/log?filterBy=entityType==workload", "", ""); !strings.Contains(string(r.body), `"subject":"`+k.ID.String()+`"`) || strings.Contains(string(r.body), "subjectName") {
		t.Errorf("the API's audit log: %s", r.body)
	}
}
