package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/web"
)

// fakeStandings stands in for the scheduler's last cycle (server.lastStandings, tested on the
// local control plane in test/e2e): the standing of each running workload by UID.
type fakeStandings map[string]scheduler.PreemptibilityChange

func (f fakeStandings) PreemptibilityStanding(uid, _ string) (scheduler.PreemptibilityChange, bool) {
	s, ok := f[uid]
	return s, ok
}

// TestS14_ChangesOfARunningWorkloadAreChecked: train-a runs preemptible on 4 GPUs of pool
// default, where alpha deserves 2. Making it non-preemptible is refused (409, naming the field,
// with what would work) through the API, its dry run, the inline control and the bulk form and
// its preview; its minimum of 2 as semi-preemptible fits; nothing refused reaches the cluster.
func TestS14_ChangesOfARunningWorkloadAreChecked(t *testing.T) {
	t.Parallel()
	lab := &fakeLabeler{}
	standings := fakeStandings{}
	f := newWorkloadAPIWith(t, lab, func(d *web.Deps) { d.Standings = standings })
	standings[f.trainA] = scheduler.PreemptibilityChange{Workload: "train-a", From: scheduler.Preemptible, Pool: "default", GPUs: 4, MinimumGPUs: 2,
		Project: scheduler.QuotaUse{Name: "alpha", Deserved: 2}, Department: &scheduler.QuotaUse{Name: "research", Deserved: 8}}
	admin := tokenOf(f.srv)
	const sentence = "train-a runs on 4 GPUs in node pool default; making it non-preemptible would give project alpha 4 GPUs of non-preemptible work there, " +
		"beyond its deserved quota of 2, and work beyond the deserved quota must stay reclaimable (S14). Keep it preemptible, " +
		"make it semi-preemptible, as its minimum of 2 GPUs fits, or ask an admin to raise project alpha's deserved quota in default to at least 4."

	for _, path := range []string{"/api/v1/workloads/" + f.trainA, "/api/v1/workloads/" + f.trainA + "?dryRun=true"} {
		r := doAs(t, f.srv, admin, "PATCH", path, "application/json", `{"preemptibility":"non-preemptible"}`)
		if diff := cmp.Diff(sentence, r.refusal(t).Message); r.status != 409 || diff != "" {
			t.Errorf("PATCH %s = %d (-want +got):\n%s", path, r.status, diff)
		}
	}
	// A dry run of what fits answers as the change would, and changes nothing.
	if r := doAs(t, f.srv, admin, "PATCH", "/api/v1/workloads/"+f.trainA+"?dryRun=true", "application/json", `{"preemptibility":"semi-preemptible"}`); r.status != 200 {
		t.Errorf("dry run of semi-preemptible = %d %s", r.status, r.body)
	}
	if lab.count() != 0 {
		t.Fatalf("%d label patches after refusals and a dry run, want none", lab.count())
	}

	// Inline: the row says why, in place.
	row := pageAs(t, f.srv, admin, "/workloads/"+f.trainA, url.Values{"preemptibility": {"non-preemptible"}}, true, 409)
	alert := findNode(row, func(n *html.Node) bool { return attr(n, "role") == "alert" })
	if alert == nil || textOf(alert) != sentence {
		t.Errorf("the row's refusal: %q", textOf(row))
	}

	// Bulk: the preview says it before anything is saved and keeps the form; applying refuses it.
	outcomes := func(doc *html.Node) []string {
		var out []string
		for _, li := range findAll(doc, func(n *html.Node) bool { return n.Data == "li" && strings.Contains(attr(n, "class"), "outcome") }) {
			out = append(out, strings.Join(strings.Fields(textOf(li)), " "))
		}
		return out
	}
	form := url.Values{"id": {f.trainA, f.trainB}, "preemptibility": {"non-preemptible"}}
	preview := url.Values{"preview": {"true"}}
	for k, v := range form {
		preview[k] = v
	}
	doc := pageAs(t, f.srv, admin, "/workloads/bulk", preview, false, 200)
	if diff := cmp.Diff([]string{"train-a: would be refused — " + sentence, "train-b: would change"}, outcomes(doc)); diff != "" {
		t.Errorf("preview (-want +got):\n%s", diff)
	}
	if box := findNode(rowOf(t, doc, f.trainA), func(n *html.Node) bool { return attr(n, "name") == "id" }); box == nil || !hasAttr(box, "checked") {
		t.Error("after the preview train-a's row is not selected any more")
	}
	if sel := findNode(doc, func(n *html.Node) bool { return attr(n, "id") == "bulk-form" }); selectedOf(inputNamed(sel, "preemptibility")) != "non-preemptible" {
		t.Error("after the preview the bulk form lost its preemptibility")
	}
	if lab.count() != 0 {
		t.Fatalf("the preview patched %d labels", lab.count())
	}
	doc = pageAs(t, f.srv, admin, "/workloads/bulk", form, false, 200)
	if diff := cmp.Diff([]string{"train-a: refused — " + sentence, "train-b: changed"}, outcomes(doc)); diff != "" {
		t.Errorf("bulk (-want +got):\n%s", diff)
	}
	if lab.count() != 1 || lab.last(t).uid != f.trainB {
		t.Errorf("label patches: %d, want train-b's only", lab.count())
	}
}
