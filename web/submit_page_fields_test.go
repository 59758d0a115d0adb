package web_test

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/arbiterhq/arbiter/workload/native"
)

// fieldNamed is the form control (input, select, textarea) with that name and value ("" any).
func fieldNamed(doc *html.Node, name, value string) *html.Node {
	return findNode(doc, func(n *html.Node) bool {
		return (n.Data == "input" || n.Data == "select" || n.Data == "textarea") && attr(n, "name") == name && (value == "" || attr(n, "value") == value)
	})
}

// refusalAt is the sentence the form shows beside the field named name.
func refusalAt(doc *html.Node, name string) string {
	in := fieldNamed(doc, name, "")
	if in == nil {
		return ""
	}
	for p := in.Parent; p != nil; p = p.Parent {
		if p.Data == "label" || p.Data == "fieldset" {
			return words(findNode(p, func(n *html.Node) bool { return strings.Contains(attr(n, "class"), "field-error") }))
		}
	}
	return ""
}

// TestSubmitPageComputeEnvPools: the Submit page asks for CPU, memory, environment variables,
// node pools (the project's) and semi-preemptibility, as the Workloads page and the API know
// them; the dry run is of the workload with them; submitting sends them as the API's fields;
// each refusal is a sentence beside its field that says what to write, and the typed values
// stay.
func TestSubmitPageComputeEnvPools(t *testing.T) {
	t.Parallel()
	fs := &fakeForesight{}
	f := newSubmitAPIWith(t, func(d *web.Deps) { d.Foresee = fs })
	pool := create(t, f.srv, "/api/v1/node-pools", `{"name":"a100","labelKey":"gpu","labelValue":"a100","placement":"binpack"}`)
	send(t, f.srv, "PUT", "/api/v1/org-unit/projects/"+f.alpha, `{"nodePools":["`+pool+`","`+store.DefaultNodePoolID.String()+`"]}`, 200)
	rita := newAPIKey(t, f.st, "researcher", "project", f.alpha)

	doc := pageAs(t, f.srv, rita, "/submit?projectId="+f.alpha, nil, false, 200)
	for _, name := range []string{"spec.compute.cpuCoreRequest", "spec.compute.cpuMemoryRequest", "spec.environmentVariables"} {
		if fieldNamed(doc, name, "") == nil {
			t.Errorf("the form has no %s", name)
		}
	}
	if fieldNamed(doc, "spec.nodePools", "a100") == nil || fieldNamed(doc, "spec.nodePools", "default") == nil {
		t.Errorf("the form does not offer alpha's pools a100 and default")
	}
	if findNode(fieldNamed(doc, "spec.preemptibility", ""), func(n *html.Node) bool { return n.Data == "option" && attr(n, "value") == "semi-preemptible" }) == nil {
		t.Errorf("the form does not offer semi-preemptible")
	}

	form := func(edit func(url.Values)) url.Values {
		v := url.Values{"type": {"distributed"}, "projectId": {f.alpha}, "name": {"big"}, "spec.image": {"python:3.12"},
			"spec.compute.gpuDevicesRequest": {"1"}, "spec.numWorkers": {"3"}, "spec.compute.cpuCoreRequest": {"2.5"},
			"spec.compute.cpuMemoryRequest": {"4Gi"}, "spec.environmentVariables": {"EPOCHS=3\r\n\r\nMODE=fast=yes"},
			"spec.nodePools": {"a100"}, "spec.preemptibility": {"semi-preemptible"}}
		if edit != nil {
			edit(v)
		}
		return v
	}
	// The dry run is of the workload with all of them.
	pageAs(t, f.srv, rita, "/submit/dry-run", form(nil), true, 200)
	asked := fs.asked()
	if len(asked) == 0 {
		t.Fatal("no dry run")
	}
	job, ok := asked[len(asked)-1].(*batchv1.Job)
	if !ok {
		t.Fatalf("dry run of %T", asked[len(asked)-1])
	}
	c := job.Spec.Template.Spec.Containers[0]
	if cpu, mem := c.Resources.Requests[corev1.ResourceCPU], c.Resources.Requests[corev1.ResourceMemory]; cpu.MilliValue() != 2500 || mem.String() != "4Gi" {
		t.Errorf("dry run's requests %v", c.Resources.Requests)
	}
	if len(c.Env) != 2 || c.Env[0].Name != "EPOCHS" || c.Env[0].Value != "3" || c.Env[1].Name != "MODE" || c.Env[1].Value != "fast=yes" {
		t.Errorf("dry run's env %+v", c.Env)
	}
	if a := job.Spec.Template.Spec.Affinity; a == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != "a100" {
		t.Errorf("dry run's affinity %+v", a)
	}
	if job.Labels["kai.scheduler/preemptibility"] != "semi-preemptible" {
		t.Errorf("dry run's labels %v", job.Labels)
	}

	// Refusals: beside the field, in words a person acts on; what was typed stays.
	for _, tc := range []struct {
		name, field, value, want string
	}{
		{"cpu not a number", "spec.compute.cpuCoreRequest", "two", `"two" is not a number of CPU cores; write one such as 0.5 or 4`},
		{"cpu too many", "spec.compute.cpuCoreRequest", "2000", "at most 1024 a replica"},
		{"memory", "spec.compute.cpuMemoryRequest", "4 GB", `"4 GB" is not an amount of memory; write a number with a unit, such as 512Mi or 20Gi`},
		{"memory too much", "spec.compute.cpuMemoryRequest", "20Ti", "more than 16Ti a pod"},
		{"env without =", "spec.environmentVariables", "A=1\nEPOCHS", `line 2 ("EPOCHS") has no '='; write one variable a line, as NAME=value`},
		{"env twice", "spec.environmentVariables", "A=1\nB=2\nA=3", "line 3 sets A again (line 1 set it first)"},
		{"env name", "spec.environmentVariables", "1X=2", `line 1: "1X" is not a variable name`},
		{"semi where not allowed", "spec.preemptibility", "semi-preemptible", "does not allow changing preemptibility"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := form(func(v url.Values) { v.Set(tc.field, tc.value) })
			if tc.name == "semi where not allowed" {
				v.Set("projectId", f.gamma)
				v.Del("spec.nodePools")
			}
			code, _, body := submitFormPost(t, f.srv.URL, tokenOf(f.srv), v)
			if code != 400 {
				t.Fatalf("POST /submit = %d, want 400", code)
			}
			doc, _ := html.Parse(strings.NewReader(body))
			if got := refusalAt(doc, tc.field); !strings.Contains(got, tc.want) {
				t.Errorf("beside %s: %q, want %q", tc.field, got, tc.want)
			}
			if in := fieldNamed(doc, tc.field, ""); in != nil && in.Data != "select" && attr(in, "value")+textOf(in) != tc.value {
				t.Errorf("%s shows %q after the refusal, want %q", tc.field, attr(in, "value")+textOf(in), tc.value)
			}
		})
	}
	if n := f.cluster.count(); n != 0 {
		t.Fatalf("%d refused forms reached the cluster", n)
	}

	// Submitted: the API's fields, as the cluster gets them.
	code, loc, body := submitFormPost(t, f.srv.URL, rita, form(nil))
	if code != 303 || !strings.HasPrefix(loc, "/workloads/") {
		t.Fatalf("POST /submit = %d %s %.400s", code, loc, body)
	}
	w := f.cluster.last(t)
	if w.Kind != native.Distributed || w.CPU == nil || w.CPU.MilliValue() != 2500 || w.Memory == nil || w.Memory.String() != "4Gi" ||
		len(w.Env) != 2 || strings.Join(w.NodePools, ",") != "a100" || w.Preemptibility != "semi-preemptible" {
		t.Errorf("submitted %+v", w)
	}
}
