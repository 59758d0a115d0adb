package web_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/arbiterhq/arbiter/views"
)

// TestWorkloadPageActions: a workload's page offers stop (or run), clone and delete to whoever
// the API would let take them, and nobody else; each goes through the API's code and comes
// back to the page saying what it did; a refusal is the page with the API's sentence; deleting
// asks for a confirmation first; an inference offers no stop, and says why.
func TestWorkloadPageActions(t *testing.T) {
	t.Parallel()
	f := newSubmitAPI(t)
	rita := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	omar := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	viewer := newAPIKey(t, f.st, "viewer", "project", f.alpha)
	submit := func(token, kind, body string) string {
		t.Helper()
		r := f.submit(t, token, kind, fmt.Sprintf(body, f.alpha))
		if r.status != 202 {
			t.Fatalf("POST %s = %d %s", kind, r.status, r.body)
		}
		return decode[views.SubmittedWorkload](t, r.body).ID
	}
	mine := submit(rita, "trainings", `{"name":"mine","projectId":%q,"spec":{"image":"python:3.12"}}`)
	theirs := submit(omar, "trainings", `{"name":"theirs","projectId":%q,"spec":{"image":"python:3.12"}}`)
	serve := submit(rita, "inferences", `{"name":"serve","projectId":%q,"spec":{"image":"vllm/vllm","servingPort":{"container":8000}}}`)

	doc := pageAs(t, f.srv, rita, "/workloads/"+mine, nil, false, 200)
	for _, id := range []string{"action-stop", "action-clone", "action-delete", "action-delete-confirm"} {
		if byID(doc, id) == nil {
			t.Errorf("rita's own training offers no %s", id)
		}
	}
	if byID(doc, "action-run") != nil {
		t.Errorf("a pending training offers Run")
	}
	if c := byID(doc, "action-clone"); c != nil && attr(c, "href") != "/submit?clone="+mine {
		t.Errorf("Clone goes to %s", attr(c, "href"))
	}
	// Deleting is behind a confirmation that says what it does.
	if d := findNode(doc, func(n *html.Node) bool {
		return n.Data == "details" && hasAttr(n, "class") && strings.Contains(attr(n, "class"), "confirm-delete")
	}); d == nil ||
		!strings.Contains(words(d), "removes its pods") || hasAttr(d, "open") {
		t.Errorf("delete is not behind a closed confirmation: %q", words(d))
	}
	// Another researcher's workload: cloning it only (the API would refuse the rest); a viewer:
	// nothing.
	if doc := pageAs(t, f.srv, rita, "/workloads/"+theirs, nil, false, 200); byID(doc, "action-stop") != nil || byID(doc, "action-delete") != nil || byID(doc, "action-clone") == nil {
		t.Errorf("rita's actions on omar's workload: %q", words(byID(doc, "workload-actions")))
	}
	if byID(pageAs(t, f.srv, viewer, "/workloads/"+mine, nil, false, 200), "workload-actions") != nil {
		t.Errorf("a viewer is offered actions")
	}
	// Posted anyway, the refusal is the API's sentence on the workload's page.
	doc = pageAs(t, f.srv, rita, "/workloads/"+theirs+"/stop", url.Values{}, false, 403)
	if got := words(byID(doc, "action-refused")); !strings.Contains(got, "researchers may stop only their own workloads") {
		t.Errorf("refusal = %q", got)
	}
	pageAs(t, f.srv, viewer, "/workloads/"+mine+"/delete", url.Values{}, false, 403)
	if n := len(f.cluster.deleted) + len(f.cluster.suspended); n != 0 {
		t.Fatalf("refused actions reached the cluster %d times", n)
	}

	// Stop, then run: the page says what each did and offers the other.
	doc = pageAs(t, f.srv, rita, "/workloads/"+mine+"/stop", url.Values{}, false, 200)
	if got := words(byID(doc, "action-done")); !strings.HasPrefix(got, "Stopped") {
		t.Errorf("after stopping the page says %q", got)
	}
	if byID(doc, "action-run") == nil || byID(doc, "action-stop") != nil || words(byID(doc, "story-phase")) != "Suspended" {
		t.Errorf("a stopped training offers run %v, stop %v, phase %q", byID(doc, "action-run") != nil, byID(doc, "action-stop") != nil, words(byID(doc, "story-phase")))
	}
	if got := words(byID(doc, "next-step")); !strings.HasPrefix(got, "Stopped by ") || !strings.Contains(got, "until someone runs it again") {
		t.Errorf("a stopped workload's next step: %q", got)
	}
	doc = pageAs(t, f.srv, rita, "/workloads/"+mine+"/run", url.Values{}, false, 200)
	if got := words(byID(doc, "action-done")); !strings.HasPrefix(got, "Back in its project's queue") || byID(doc, "action-stop") == nil {
		t.Errorf("after running the page says %q", got)
	}
	if fmt.Sprint(f.cluster.suspended) != "[true false]" {
		t.Errorf("the cluster was asked to suspend %v", f.cluster.suspended)
	}

	// An inference: no stop, with the reason; posted anyway, the API's 409 sentence.
	doc = pageAs(t, f.srv, rita, "/workloads/"+serve, nil, false, 200)
	if byID(doc, "action-stop") != nil || byID(doc, "action-delete") == nil ||
		!strings.Contains(words(findNode(doc, func(n *html.Node) bool { return attr(n, "class") == "muted action-note" })), "an inference cannot be stopped") {
		t.Errorf("an inference's actions: %q", words(byID(doc, "workload-actions")))
	}
	doc = pageAs(t, f.srv, rita, "/workloads/"+serve+"/stop", url.Values{}, false, 409)
	if !strings.Contains(words(byID(doc, "action-refused")), "an inference cannot be stopped") {
		t.Errorf("stopping an inference: %q", words(byID(doc, "action-refused")))
	}

	// Delete: through the API's code, audited, and the page says so.
	doc = pageAs(t, f.srv, rita, "/workloads/"+mine+"/delete", url.Values{}, false, 200)
	if got := words(byID(doc, "action-done")); !strings.HasPrefix(got, "Deleted") {
		t.Errorf("after deleting the page says %q", got)
	}
	if len(f.cluster.deleted) != 1 || f.cluster.deleted[0].UID != mine {
		t.Errorf("deleted = %+v", f.cluster.deleted)
	}
	var deletes int
	for _, r := range auditRows(t, f.st, "workload") {
		if r.Action == "delete" && r.EntityID == mine && r.Result == "success" {
			deletes++
		}
	}
	if deletes != 1 {
		t.Errorf("%d audit rows of the delete", deletes)
	}
}
