package web_test

import (
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
