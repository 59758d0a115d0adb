package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
)

// TestS14_ChecksAndRecordsOfAChangeTogether: the one change (workloads.Service.Change) behind the API, its dry run,
// the inline control and the bulk form both checks S14 for a running workload and records each
// change as its own kind of event. Refusals and dry runs record nothing in the workload's
// history; a change of priority and preemptibility together that S14 allows records one
// PriorityChanged and one PreemptibilityChanged; the bulk form's change of preemptibility is a
// PreemptibilityChanged, not a PriorityChanged.
func TestS14_ChecksAndRecordsOfAChangeTogether(t *testing.T) {
	t.Parallel()
	lab := &fakeLabeler{}
	standings := fakeStandings{}
	f := newWorkloadAPIWith(t, lab, func(d *web.Deps) { d.Standings = standings })
	standings[f.trainA] = scheduler.PreemptibilityChange{Workload: "train-a", From: scheduler.Preemptible, Pool: "default", GPUs: 4, MinimumGPUs: 2,
		Project: scheduler.QuotaUse{Name: "alpha", Deserved: 2}, Department: &scheduler.QuotaUse{Name: "research", Deserved: 8}}
	admin := tokenOf(f.srv)
	history := func(uid string) []string {
		var kinds []string
		for _, ev := range list[views.WorkloadEvent](t, f.srv, "/api/v1/workloads/"+uid+"/events", "events") {
			if ev.Kind == "PriorityChanged" || ev.Kind == "PreemptibilityChanged" {
				said, _, _ := strings.Cut(ev.Message, " by ") // and who: the test's admin
				kinds = append(kinds, ev.Kind+": "+said)
			}
		}
		return kinds
	}

	// Refused (S14) and dry runs, refused or not: nothing in the history, nothing labelled.
	for _, c := range []struct {
		path, body string
		want       int
	}{
		{"/api/v1/workloads/" + f.trainA, `{"priority":"high","preemptibility":"non-preemptible"}`, 409},
		{"/api/v1/workloads/" + f.trainA + "?dryRun=true", `{"preemptibility":"non-preemptible"}`, 409},
		{"/api/v1/workloads/" + f.trainA + "?dryRun=true", `{"priority":"high","preemptibility":"semi-preemptible"}`, 200},
	} {
		if r := doAs(t, f.srv, admin, "PATCH", c.path, "application/json", c.body); r.status != c.want {
			t.Errorf("PATCH %s %s = %d %s, want %d", c.path, c.body, r.status, r.body, c.want)
		}
	}
	preview := url.Values{"preview": {"true"}, "id": {f.trainA, f.trainB}, "preemptibility": {"semi-preemptible"}}
	pageAs(t, f.srv, admin, "/workloads/bulk", preview, false, 200)
	if got := history(f.trainA); len(got) != 0 {
		t.Errorf("train-a's history after refusals and dry runs: %q, want nothing", got)
	}
	if got := history(f.trainB); len(got) != 0 {
		t.Errorf("train-b's history after a preview: %q, want nothing", got)
	}
	if lab.count() != 0 {
		t.Fatalf("%d label patches after refusals and dry runs, want none", lab.count())
	}

	// Within S14 (its minimum of 2 fits alpha's 2): one event of each kind.
	if r := doAs(t, f.srv, admin, "PATCH", "/api/v1/workloads/"+f.trainA, "application/json", `{"priority":"high","preemptibility":"semi-preemptible"}`); r.status != 200 {
		t.Fatalf("PATCH within S14 = %d %s", r.status, r.body)
	}
	want := []string{"PriorityChanged: Changed priority from low to high", "PreemptibilityChanged: Changed preemptibility from preemptible to semi-preemptible"}
	if diff := cmp.Diff(want, history(f.trainA)); diff != "" {
		t.Errorf("train-a's history (-want +got):\n%s", diff)
	}

	// The bulk form applies through the same code: a change of preemptibility is its own kind.
	pageAs(t, f.srv, admin, "/workloads/bulk", url.Values{"id": {f.trainB}, "preemptibility": {"preemptible"}}, false, 200)
	if diff := cmp.Diff([]string{"PreemptibilityChanged: Changed preemptibility from non-preemptible to preemptible"}, history(f.trainB)); diff != "" {
		t.Errorf("train-b's history after the bulk change (-want +got):\n%s", diff)
	}
	if lab.count() != 2 {
		t.Errorf("%d label patches, want 2 (train-a's change, train-b's bulk change)", lab.count())
	}
}
