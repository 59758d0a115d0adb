package web_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
)

// valueOf is what a form control holds: an input's value, a textarea's text, a select's chosen
// option.
func valueOf(doc *html.Node, name string) string {
	n := fieldNamed(doc, name, "")
	switch {
	case n == nil:
		return "<none>"
	case n.Data == "select":
		return selectedOf(n)
	case n.Data == "textarea":
		return textOf(n)
	}
	return attr(n, "value")
}

// TestSubmitPageClone: "Clone" opens the Submit page filled from the workload: a suggested
// name, its project and type, image, command, arguments, resources, environment, node pools,
// and the priority and preemptibility only where the original asked for them (a workload left
// to the defaults is copied left to them); submitting the form unchanged submits the same
// workload under the new name. A workload the caller may not read is not found; one whose
// objects are gone fills in what its record knows, and says so.
func TestSubmitPageClone(t *testing.T) {
	t.Parallel()
	f := newSubmitAPI(t)
	pool := create(t, f.srv, "/api/v1/node-pools", `{"name":"a100","labelKey":"gpu","labelValue":"a100","placement":"binpack"}`)
	send(t, f.srv, "PUT", "/api/v1/org-unit/projects/"+f.alpha, `{"nodePools":["`+pool+`","`+store.DefaultNodePoolID.String()+`"]}`, 200)
	rita := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	other := newAPIKey(t, f.st, "researcher", "project", f.beta)
	submit := func(kind, body string) string {
		t.Helper()
		r := f.submit(t, rita, kind, fmt.Sprintf(body, f.alpha))
		if r.status != 202 {
			t.Fatalf("POST %s = %d %s", kind, r.status, r.body)
		}
		return decode[views.SubmittedWorkload](t, r.body).ID
	}
	explicit := submit("distributed", `{"name":"big-run","projectId":%q,"spec":{"image":"pytorch/pytorch:2.4","command":"torchrun train.py",
		"args":"--data '/data/my set'","numWorkers":3,"compute":{"gpuDevicesRequest":2,"cpuCoreRequest":1.5,"cpuMemoryRequest":"8Gi"},
		"environmentVariables":[{"name":"EPOCHS","value":"3"},{"name":"MODE","value":"a=b"}],"nodePools":["a100"],
		"priorityClass":"high","preemptibility":"semi-preemptible"}}`)
	defaults := submit("workspaces", `{"name":"notebook-4","projectId":%q,"spec":{"image":"jupyter/base"}}`)

	doc := pageAs(t, f.srv, rita, "/submit?clone="+explicit, nil, false, 200)
	want := map[string]string{"type": "distributed", "projectId": f.alpha, "name": "big-run-2", "spec.image": "pytorch/pytorch:2.4",
		"spec.command": "torchrun train.py", "spec.args": "--data '/data/my set'", "spec.numWorkers": "3", "spec.compute.gpuDevicesRequest": "2",
		"spec.compute.cpuCoreRequest": "1.5", "spec.compute.cpuMemoryRequest": "8Gi", "spec.environmentVariables": "EPOCHS=3\nMODE=a=b",
		"spec.priorityClass": "high", "spec.preemptibility": "semi-preemptible"}
	for name, v := range want {
		if got := valueOf(doc, name); got != v {
			t.Errorf("the clone's %s = %q, want %q", name, got, v)
		}
	}
	if a100 := fieldNamed(doc, "spec.nodePools", "a100"); a100 == nil || !hasAttr(a100, "checked") || hasAttr(fieldNamed(doc, "spec.nodePools", "default"), "checked") {
		t.Errorf("the clone's node pools are not a100 alone")
	}
	if got := words(byID(doc, "clone-of")); !strings.Contains(got, "team-alpha/big-run") {
		t.Errorf("the form says %q of where it comes from", got)
	}

	// Left to the defaults, the copy is too: General settings at "default".
	doc = pageAs(t, f.srv, rita, "/submit?clone="+defaults, nil, false, 200)
	if valueOf(doc, "name") != "notebook-5" || valueOf(doc, "type") != "workspaces" || valueOf(doc, "spec.priorityClass") != "" || valueOf(doc, "spec.preemptibility") != "" {
		t.Errorf("the clone of a workload left to the defaults: name %q type %q priority %q preemptibility %q",
			valueOf(doc, "name"), valueOf(doc, "type"), valueOf(doc, "spec.priorityClass"), valueOf(doc, "spec.preemptibility"))
	}

	// Submitted as it is, the form makes the same workload under the new name.
	form := url.Values{}
	doc = pageAs(t, f.srv, rita, "/submit?clone="+explicit, nil, false, 200)
	for _, n := range findAll(doc, func(n *html.Node) bool {
		return (n.Data == "input" || n.Data == "select" || n.Data == "textarea") && attr(n, "name") != "" && attr(n, "name") != "_csrf"
	}) {
		if attr(n, "type") == "checkbox" && !hasAttr(n, "checked") {
			continue
		}
		form.Add(attr(n, "name"), valueOf(doc, attr(n, "name")))
		if attr(n, "type") == "checkbox" {
			form.Set(attr(n, "name"), attr(n, "value"))
		}
	}
	first := f.cluster.submitted[0] // big-run
	if code, loc, body := submitFormPost(t, f.srv.URL, rita, form); code != 303 {
		t.Fatalf("submitting the clone = %d %s %.400s", code, loc, body)
	}
	second := f.cluster.last(t)
	first.Name, first.Pools = "big-run-2", second.Pools
	if fmt.Sprintf("%+v", first) != fmt.Sprintf("%+v", second) {
		t.Errorf("the clone submitted\n%+v\nthe original\n%+v", second, first)
	}

	// Not readable: not found. Gone from the cluster: what the record knows, and a sentence.
	pageAs(t, f.srv, other, "/submit?clone="+explicit, nil, false, 404)
	pageAs(t, f.srv, rita, "/workloads/"+defaults+"/delete", url.Values{}, false, 200)
	doc = pageAs(t, f.srv, rita, "/submit?clone="+defaults, nil, false, 200)
	if valueOf(doc, "name") != "notebook-5" || valueOf(doc, "spec.image") != "" || !strings.Contains(words(byID(doc, "clone-note")), "not in the cluster any more") {
		t.Errorf("the clone of a deleted workload: name %q image %q note %q", valueOf(doc, "name"), valueOf(doc, "spec.image"), words(byID(doc, "clone-note")))
	}
}
