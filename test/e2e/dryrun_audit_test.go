package e2e

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/store"
)

// dryRunAudits are the audit rows of dry runs that answered (not the refused ones).
func (f *dryRunFlow) dryRunAudits() []store.AuditEntry {
	f.e.t.Helper()
	all, err := f.e.store.AuditEntries(f.e.ctx, 500)
	if err != nil {
		f.e.t.Fatal(err)
	}
	var out []store.AuditEntry
	for _, a := range all {
		if a.Action == "dry-run" && a.Result == "success" {
			out = append(out, a)
		}
	}
	return out
}

// TestDryRun_NamingVictimsIsAudited: against the real scheduler, a dry run whose answer names
// no one leaves no audit row; one that names the workloads it would preempt leaves one row
// saying who asked, for which project, the outcome and the victims (their count and names).
// Asking the same again at once (as the Submit page's panel does while one types) adds no
// second row.
func TestDryRun_NamingVictimsIsAudited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	f := &dryRunFlow{e: e, uids: map[string]string{}}
	teamNS := e.project("team", 2, store.PolicyUpdate{})
	p, err := e.store.ProjectNamed(e.ctx, "team-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	team := p.ID.String()

	// Free capacity: it would start now, evicting no one, so nothing is audited.
	body := training("victim", team, 4, "low", "preemptible")
	if got := f.dryRun(body); got.outcome != "start-now" || len(got.victims) != 0 {
		t.Fatalf("free capacity: %v", got.raw)
	}
	if rows := f.dryRunAudits(); len(rows) != 0 {
		t.Errorf("a dry run naming no victims left audit rows: %+v", rows)
	}

	f.submit("victim", body)
	e.eventually("the victim runs", time.Minute, func() bool { return e.running(teamNS, "victim") == 1 })

	// Preemption: the answer names the victim, and the row says so.
	urgent := training("urgent", team, 2, "high", "non-preemptible")
	if got := f.dryRun(urgent); got.outcome != "start-after-preemption" || len(got.victims) != 1 {
		t.Fatalf("preemption: %v", got.raw)
	}
	rows := f.dryRunAudits()
	if len(rows) != 1 {
		t.Fatalf("a dry run naming a victim left %d audit rows: %+v", len(rows), rows)
	}
	row := rows[0]
	if row.SubjectType != "api-key" || row.EntityType != "workload" || row.EntityName != "urgent" || row.HTTPStatus != 200 {
		t.Errorf("the row = %+v", row)
	}
	want := map[string]any{"project": "team-" + e.id, "projectId": team, "outcome": "start-after-preemption", "victimCount": float64(1),
		"victims": []any{teamNS + "/victim"}}
	if diff := cmp.Diff(want, row.Changes); diff != "" {
		t.Errorf("the row's changes (-want +got):\n%s", diff)
	}

	// The same answer again, at once: no second row.
	f.dryRun(urgent)
	if rows := f.dryRunAudits(); len(rows) != 1 {
		t.Errorf("the same dry run twice left %d audit rows: %+v", len(rows), rows)
	}
}
