package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/views"
)

// S25's fields on departments and projects and S27's on projects, through the API, with the
// warning an offset above the dictionary's top earns.
func TestPriorityFenceAndDelayFields(t *testing.T) {
	t.Parallel()
	srv, _, _, dept, proj := orgAPI(t)
	d := sendAs[views.Department](t, srv, "PUT", "/api/v1/org-unit/departments/"+dept, `{"priorityPolicy":"open","priorityOffset":1000}`, 200)
	if d.PriorityPolicy != "open" || d.PriorityOffset != 1000 || !strings.Contains(d.PriorityWarning, "above very-high (150)") {
		t.Errorf("department after PUT: %q %d, warning %q", d.PriorityPolicy, d.PriorityOffset, d.PriorityWarning)
	}
	p := sendAs[views.Project](t, srv, "PUT", "/api/v1/org-unit/projects/"+proj,
		`{"policy":{"priorityPolicy":"open","priorityOffset":-20,"reclaimMinRuntimeSeconds":600,"preemptionDelaySeconds":120}}`, 200)
	if got := p.Policy; got.PriorityPolicy != "open" || got.PriorityOffset != -20 || got.ReclaimMinRuntimeSeconds != 600 || got.PreemptionDelaySeconds != 120 || p.PriorityWarning != "" {
		t.Errorf("project after PUT: %+v, warning %q", got, p.PriorityWarning)
	}
	if got := getAs[views.Project](t, srv, "/api/v1/org-unit/projects/"+proj).Policy; got.PreemptionDelaySeconds != 120 || got.PriorityOffset != -20 {
		t.Errorf("project read back: %+v", got)
	}
	d = sendAs[views.Department](t, srv, "PUT", "/api/v1/org-unit/departments/"+dept, `{"priorityPolicy":null,"priorityOffset":null}`, 200)
	if d.PriorityPolicy != "fence" || d.PriorityOffset != 0 || d.PriorityWarning != "" {
		t.Errorf("department back to defaults: %+v", d)
	}
}

// The console's department and project forms save S25's and S27's fields, and a department
// whose offset lifts its work above very-high shows the warning on its row.
func TestPriorityFenceConsoleForms(t *testing.T) {
	t.Parallel()
	srv, _, _, dept, proj := orgAPI(t)
	form := "application/x-www-form-urlencoded"
	r := do(t, srv, "POST", "/departments/"+dept, form, url.Values{"priorityPolicy": {"fence"}, "priorityOffset": {"500"}}.Encode())
	if r.status >= 400 {
		t.Fatalf("department priority form = %d: %s", r.status, r.body)
	}
	d := getAs[views.Department](t, srv, "/api/v1/org-unit/departments/"+dept)
	if d.PriorityPolicy != "fence" || d.PriorityOffset != 500 {
		t.Errorf("department after the form: %q %d", d.PriorityPolicy, d.PriorityOffset)
	}
	page := string(get(t, srv, "/departments").body)
	if !strings.Contains(page, "priority: fenced, +500") || !strings.Contains(page, "queue priority of at least 500, above very-high (150)") {
		t.Errorf("the Departments page shows neither the setting nor the warning")
	}
	r = do(t, srv, "POST", "/projects/"+proj+"/policy", form, url.Values{"preemptionOrder": {"oldest"}, "preemptionMode": {"terminate"},
		"queueing": {"best-effort"}, "allowPriorityChange": {"true"}, "priorityPolicy": {"open"}, "priorityOffset": {"-5"},
		"preemptionDelaySeconds": {"90"}, "reclaimMinRuntimeSeconds": {"300"}}.Encode())
	if r.status >= 400 {
		t.Fatalf("project policy form = %d: %s", r.status, r.body)
	}
	p := getAs[views.Project](t, srv, "/api/v1/org-unit/projects/"+proj).Policy
	if p.PriorityPolicy != "open" || p.PriorityOffset != -5 || p.PreemptionDelaySeconds != 90 || p.ReclaimMinRuntimeSeconds != 300 {
		t.Errorf("project policy after the form: %+v", p)
	}
	if page := string(get(t, srv, "/projects").body); !strings.Contains(page, "delay 90s") || !strings.Contains(page, "priority: open, -5") {
		t.Errorf("the Projects page does not summarise the new policy fields")
	}
}
