package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/arbiterhq/arbiter/web"
)

// submitFormPost posts the Submit page's form without following the redirect, and returns the
// status, the Location and the body.
func submitFormPost(t *testing.T, srv string, token string, form url.Values) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", srv+"/submit", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+token)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(raw)
}

func navLabels(doc *html.Node) string {
	var out []string
	for _, a := range findAll(doc, func(n *html.Node) bool { return n.Data == "a" && n.Parent != nil && n.Parent.Data == "li" }) {
		out = append(out, textOf(a))
	}
	return strings.Join(out, ",")
}

func inputNamed(doc *html.Node, name string) *html.Node {
	return findNode(doc, func(n *html.Node) bool { return (n.Data == "input" || n.Data == "select") && attr(n, "name") == name })
}

func selectedOf(sel *html.Node) string {
	if o := findNode(sel, func(n *html.Node) bool { return n.Data == "option" && hasAttr(n, "selected") }); o != nil {
		return attr(o, "value")
	}
	return ""
}

// TestSubmitPage: the page lists the projects the caller may submit to and the type's fields
// and defaults; a change of type answers the fields of the new type with its defaults; the
// panel shows the dry run with links to the victims' pages; submitting creates the workload
// through the API's code and goes to its page; a refusal stands next to its field; a viewer
// has neither the form nor the navigation entry.
func TestSubmitPage(t *testing.T) {
	t.Parallel()
	fs := &fakeForesight{}
	f := newSubmitAPIWith(t, func(d *web.Deps) { d.Foresee = fs })
	researcher := newAPIKey(t, f.st, "researcher", "project", f.alpha)

	doc := pageAs(t, f.srv, researcher, "/submit", nil, false, 200)
	if nav := navLabels(doc); !strings.Contains(nav, "Nodes,Submit") {
		t.Errorf("navigation = %s", nav)
	}
	proj := inputNamed(doc, "projectId")
	if opts := findAll(proj, func(n *html.Node) bool { return n.Data == "option" }); len(opts) != 1 || attr(opts[0], "value") != f.alpha {
		t.Errorf("the researcher of alpha may submit to %d projects", len(opts))
	}
	if selectedOf(inputNamed(doc, "type")) != "trainings" || inputNamed(doc, "spec.numWorkers") != nil || inputNamed(doc, "spec.autoscaling.minReplicas") != nil {
		t.Errorf("a training's form has workers or replicas")
	}
	// General settings start at the defaults, each a choice of its own that names today's value.
	defaultNamed := func(doc *html.Node, field string) string {
		sel := inputNamed(doc, field)
		if selectedOf(sel) != "" {
			return "selected " + selectedOf(sel)
		}
		return textOf(findNode(sel, func(n *html.Node) bool { return n.Data == "option" && attr(n, "value") == "" }))
	}
	if !strings.Contains(textOf(doc), "General settings") || defaultNamed(doc, "spec.priorityClass") != "default (low)" ||
		defaultNamed(doc, "spec.preemptibility") != "default (preemptible)" {
		t.Errorf("a training's General settings: %q %q", defaultNamed(doc, "spec.priorityClass"), defaultNamed(doc, "spec.preemptibility"))
	}

	// The type changes: a workspace's defaults (high, non-preemptible); a distributed training has workers.
	fields := pageAs(t, f.srv, researcher, "/submit/fields", url.Values{"type": {"workspaces"}, "projectId": {f.alpha}, "name": {"kept"},
		"spec.priorityClass": {"low"}}, true, 200)
	if defaultNamed(fields, "spec.priorityClass") != "default (high)" || defaultNamed(fields, "spec.preemptibility") != "default (non-preemptible)" ||
		attr(inputNamed(fields, "name"), "value") != "kept" {
		t.Errorf("a workspace's fields: %q %q", defaultNamed(fields, "spec.priorityClass"), defaultNamed(fields, "spec.preemptibility"))
	}
	fields = pageAs(t, f.srv, researcher, "/submit/fields", url.Values{"type": {"distributed"}, "projectId": {f.alpha}}, true, 200)
	if inputNamed(fields, "spec.numWorkers") == nil || inputNamed(fields, "spec.servingPort.container") != nil {
		t.Error("a distributed training's fields have no workers, or a serving port")
	}
	fields = pageAs(t, f.srv, researcher, "/submit/fields", url.Values{"type": {"inferences"}, "projectId": {f.alpha}}, true, 200)
	if inputNamed(fields, "spec.autoscaling.minReplicas") == nil || inputNamed(fields, "spec.servingPort.container") == nil {
		t.Error("an inference's fields have no replicas or serving port")
	}

	// The panel: the dry run of the form, naming the victim with a link to its page.
	form := url.Values{"type": {"trainings"}, "projectId": {f.alpha}, "name": {"urgent"}, "spec.image": {"python:3.12"},
		"spec.compute.gpuDevicesRequest": {"2"}, "spec.priorityClass": {"high"}, "spec.preemptibility": {"preemptible"}}
	panel := pageAs(t, f.srv, researcher, "/submit/dry-run", form, true, 200)
	link := findNode(panel, func(n *html.Node) bool { return n.Data == "a" && attr(n, "href") == "/workloads/u1" })
	if !strings.Contains(textOf(panel), "Would preempt these") || link == nil || textOf(link) != "old" {
		t.Errorf("panel = %s", textOf(panel))
	}
	if n := f.cluster.count(); n != 0 {
		t.Errorf("the panel created %d workloads", n)
	}
	empty := pageAs(t, f.srv, researcher, "/submit/dry-run", url.Values{"type": {"trainings"}, "projectId": {f.alpha}}, true, 200)
	if !strings.Contains(textOf(empty), "Give the workload a name and an image") {
		t.Errorf("an empty form's panel = %s", textOf(empty))
	}

	// Submitting: through the API's code, to the new workload's page.
	status, location, body := submitFormPost(t, f.srv.URL, researcher, form)
	if status != http.StatusSeeOther || !strings.HasPrefix(location, "/workloads/") {
		t.Fatalf("POST /submit = %d %s %.300s", status, location, body)
	}
	w := f.cluster.last(t)
	if w.Name != "urgent" || w.Priority != "high" || w.Preemptibility != "preemptible" || w.GPUs != 2 || w.Submitter != keySubmitter(t, researcher) {
		t.Errorf("submitted %+v (a preemptibility picked is a label, even the type's default)", w)
	}
	if names := workloads(t, f.srv, ""); names != "urgent" {
		t.Errorf("recorded: %q", names)
	}

	// A refusal stands next to its field, with the values kept.
	bad := url.Values{"type": {"trainings"}, "projectId": {f.alpha}, "name": {"Bad_Name"}, "spec.image": {"python"}, "spec.compute.gpuDevicesRequest": {"1"}}
	status, _, body = submitFormPost(t, f.srv.URL, researcher, bad)
	doc, _ = html.Parse(strings.NewReader(body))
	label := findNode(doc, func(n *html.Node) bool { return n.Data == "label" && inputNamed(n, "name") != nil })
	if status != 400 || label == nil || !strings.Contains(textOf(label), "Bad_Name") || attr(inputNamed(label, "name"), "value") != "Bad_Name" {
		t.Errorf("a refused name = %d; %.600s", status, body)
	}

	// The project's policy: a priority change where it is forbidden, a preemptibility change
	// where it is forbidden; each sentence beside its select. Defaults kept are no change.
	admin := tokenOf(f.srv)
	for _, tc := range []struct{ project, field, value, sentence string }{
		{f.beta, "spec.priorityClass", "very-high", "allowPriorityChange is false"},
		{f.gamma, "spec.preemptibility", "non-preemptible", "preemptibility"},
	} {
		form := url.Values{"type": {"trainings"}, "projectId": {tc.project}, "name": {"p"}, "spec.image": {"python"},
			"spec.compute.gpuDevicesRequest": {"1"}, tc.field: {tc.value}}
		status, _, body := submitFormPost(t, f.srv.URL, admin, form)
		doc, _ := html.Parse(strings.NewReader(body))
		label := findNode(doc, func(n *html.Node) bool { return n.Data == "label" && inputNamed(n, tc.field) != nil })
		var alert *html.Node
		if label != nil {
			alert = findNode(label, func(n *html.Node) bool { return attr(n, "role") == "alert" })
		}
		if status != 400 || alert == nil || !strings.Contains(textOf(alert), tc.sentence) {
			errs := findAll(doc, func(n *html.Node) bool { return attr(n, "role") == "alert" })
			var texts []string
			for _, e := range errs {
				texts = append(texts, textOf(e))
			}
			t.Errorf("%s=%s in a project that forbids it = %d; alerts %q", tc.field, tc.value, status, texts)
		}
	}
	before := f.cluster.count()
	if status, location, body := submitFormPost(t, f.srv.URL, admin, url.Values{"type": {"trainings"}, "projectId": {f.beta}, "name": {"kept"},
		"spec.image": {"python"}, "spec.compute.gpuDevicesRequest": {"1"}, "spec.priorityClass": {"low"}, "spec.preemptibility": {"preemptible"}}); status != 303 {
		t.Errorf("the defaults kept in a project that forbids changes = %d %s %.300s", status, location, body)
	}
	if f.cluster.count() != before+1 {
		t.Error("nothing was submitted")
	}

	// A viewer: no form, no navigation entry.
	viewer := newAPIKey(t, f.st, "viewer", "system", "")
	doc = pageAs(t, f.srv, viewer, "/submit", nil, false, 200)
	if inputNamed(doc, "name") != nil || strings.Contains(navLabels(doc), "Submit") {
		t.Errorf("a viewer sees the form or the navigation entry: %s", navLabels(doc))
	}
	pageAs(t, f.srv, viewer, "/submit/dry-run", form, true, 403)
}

// TestSubmitPageKeepsExplicitChoice (S9): General settings offer the default as its own
// choice, so a person who picks a value, even today's default, has it written to the workload,
// and one who leaves the default has no label and follows the default when it changes.
func TestSubmitPageKeepsExplicitChoice(t *testing.T) {
	t.Parallel()
	f := newSubmitAPI(t)
	admin := tokenOf(f.srv)
	doc := pageAs(t, f.srv, admin, "/submit", nil, false, 200)
	prio := inputNamed(doc, "spec.priorityClass")
	def := findNode(prio, func(n *html.Node) bool { return n.Data == "option" && attr(n, "value") == "" })
	if selectedOf(prio) != "" || def == nil || !strings.Contains(textOf(def), "low") {
		t.Errorf("General settings start at the default, which names low; selected %q", selectedOf(prio))
	}
	type labels struct{ Priority, Preemptibility string }
	for _, tc := range []struct {
		name          string
		priority, pre string
		want          labels
	}{
		{"picked today's defaults", "low", "preemptible", labels{"low", "preemptible"}},
		{"left at the default", "", "", labels{}},
		{"in a project that forbids changes, picked its own default", "low", "", labels{Priority: "low"}},
	} {
		project := f.alpha
		if strings.HasPrefix(tc.name, "in a project") {
			project = f.beta
		}
		status, _, body := submitFormPost(t, f.srv.URL, admin, url.Values{"type": {"trainings"}, "projectId": {project}, "name": {"pick"},
			"spec.image": {"python"}, "spec.compute.gpuDevicesRequest": {"0"}, "spec.priorityClass": {tc.priority}, "spec.preemptibility": {tc.pre}})
		if status != http.StatusSeeOther {
			t.Errorf("%s: POST /submit = %d %.300s", tc.name, status, body)
			continue
		}
		w := f.cluster.last(t)
		if diff := cmp.Diff(tc.want, labels{w.Priority, w.Preemptibility}); diff != "" {
			t.Errorf("%s: the labels (-want +got):\n%s", tc.name, diff)
		}
	}
}
