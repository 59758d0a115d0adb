package web_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"golang.org/x/net/html"
)

// keySubmitter is how a workload submitted with an API key records its submitter.
func keySubmitter(t *testing.T, token string) string {
	t.Helper()
	id, _, ok := auth.ParseAPIKey(token)
	if !ok {
		t.Fatalf("not an API key: %q", token)
	}
	return "api-key:" + id.String()
}

// TestWorkloadOwnership: a researcher changes priority and preemptibility of the workloads
// they submitted, within the project's policy, and no one else's; a research manager changes
// any of the project's. The submitter is shown in the API and can be filtered on.
func TestWorkloadOwnership(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	ctx := context.Background()
	alice := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	bob := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	gammaResearcher := newAPIKey(t, f.st, "researcher", "project", f.gamma)
	manager := newAPIKey(t, f.st, "research-manager", "project", f.alpha)

	mine, bobs, gammaMine := uuid.NewString(), uuid.NewString(), uuid.NewString()
	rec := func(uid, name, project, submitter string) store.WorkloadRecord {
		return store.WorkloadRecord{UID: uid, Namespace: "team-" + project, Name: name, Kind: "Job", APIGroup: "batch",
			TypeName: "Standard training", ProjectName: project, DepartmentName: "research", PriorityName: "low", PriorityValue: 40,
			Preemptibility: "preemptible", Phase: "Pending", Gang: 1, QueuedAt: f.at(10), Submitter: submitter}
	}
	if err := f.st.RecordWorkloads(ctx, withProjectIDs(t, f.st, []store.WorkloadRecord{
		rec(mine, "alices-run", "alpha", keySubmitter(t, alice)),
		rec(bobs, "bobs-run", "alpha", keySubmitter(t, bob)),
		rec(gammaMine, "gamma-run", "gamma", keySubmitter(t, gammaResearcher)),
	}), nil); err != nil {
		t.Fatal(err)
	}
	// The scheduler rewrites records whole: a later record without the annotation, or naming
	// someone else, does not move ownership.
	moved := rec(mine, "alices-run", "alpha", "mallory")
	if err := f.st.RecordWorkloads(ctx, withProjectIDs(t, f.st, []store.WorkloadRecord{moved}), nil); err != nil {
		t.Fatal(err)
	}

	patch := func(token, id, body string) response {
		t.Helper()
		return doAs(t, f.srv, token, "PATCH", "/api/v1/workloads/"+id, "application/json", body)
	}
	r := patch(alice, mine, `{"priority":"high","preemptibility":"non-preemptible"}`)
	if r.status != 200 {
		t.Fatalf("researcher on their own workload = %d %s", r.status, r.body)
	}
	if w := decode[views.Workload](t, r.body); w.PriorityName != "high" || w.Preemptible || w.Submitter != keySubmitter(t, alice) {
		t.Errorf("answer = %+v", w)
	}
	for _, tc := range []struct {
		who, id, want string
	}{
		{alice, bobs, "researchers may change only their own workloads, and bobs-run was submitted by " + keySubmitter(t, bob) + "; ask them or a research manager of project alpha"},
		{alice, f.trainB, "train-b was not submitted through Arbiter, so it has no submitter; ask a research manager of project alpha"},
	} {
		if r := patch(tc.who, tc.id, `{"priority":"medium"}`); r.status != 403 || !strings.Contains(r.refusal(t).Message, tc.want) {
			t.Errorf("PATCH %s = %d %s, want 403 with %q", tc.id, r.status, r.body, tc.want)
		}
	}
	// Their own, but outside the project's policy: the policy's sentence.
	if r := patch(gammaResearcher, gammaMine, `{"priority":"very-high"}`); r.status != 400 || !strings.Contains(r.refusal(t).Message, "outside project gamma's allowed range") {
		t.Errorf("own workload outside the policy = %d %s", r.status, r.body)
	}
	if r := patch(gammaResearcher, gammaMine, `{"preemptibility":"non-preemptible"}`); r.status != 400 || !strings.Contains(r.refusal(t).Message, "does not allow changing preemptibility") {
		t.Errorf("own workload, preemptibility locked = %d %s", r.status, r.body)
	}
	// A research manager changes anyone's in the project.
	if r := patch(manager, bobs, `{"priority":"medium"}`); r.status != 200 {
		t.Errorf("research manager on bob's = %d %s", r.status, r.body)
	}

	if got := workloads(t, f.srv, "filterBy=submitter=="+keySubmitter(t, bob)); got != "bobs-run" {
		t.Errorf("filter by submitter = %q", got)
	}

	// The Workloads page: the Submitter column, and a researcher's own row enabled while
	// another's is disabled with the sentence why; an inline change of their own is saved.
	doc := pageAs(t, f.srv, alice, "/workloads", nil, false, 200)
	mineRow, bobsRow := rowOf(t, doc, mine), rowOf(t, doc, bobs)
	if !strings.Contains(textOf(mineRow), keySubmitter(t, alice)) || !strings.Contains(textOf(doc), "Submitter") {
		t.Errorf("alice's row does not show its submitter: %q", textOf(mineRow))
	}
	if s := selectIn(mineRow, "priority"); s == nil || hasAttr(s, "disabled") {
		t.Errorf("alice's own row is not editable: %q", textOf(mineRow))
	}
	// The sentence why is the note above the table that the disabled select names as its
	// description (each sentence is said once on the page, not under every row it locks).
	if s := selectIn(bobsRow, "priority"); s == nil || !hasAttr(s, "disabled") {
		t.Errorf("bob's row for alice: %q", textOf(bobsRow))
	} else if note := findNode(doc, func(n *html.Node) bool { return attr(n, "id") == attr(s, "aria-describedby") }); note == nil ||
		!strings.Contains(textOf(note), "was submitted by "+keySubmitter(t, bob)) {
		t.Errorf("bob's row for alice is not described by the sentence why: %q", textOf(bobsRow))
	}
	story := pageAs(t, f.srv, alice, "/workloads/"+mine, nil, false, 200)
	if n := findNode(story, func(n *html.Node) bool { return attr(n, "id") == "story-submitter" }); n == nil || textOf(n) != keySubmitter(t, alice) {
		t.Errorf("the workload's page does not say who submitted it")
	}
	row := pageAs(t, f.srv, alice, "/workloads/"+mine, url.Values{"priority": {"medium"}}, true, 200)
	if !strings.Contains(textOf(row), "Saved priority") {
		t.Errorf("alice's inline change: %q", textOf(row))
	}
}
