package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
)

// priorityID is the id of a dictionary entry.
func (e *env) priorityID(name string) uuid.UUID {
	e.t.Helper()
	prios, err := e.store.Priorities(e.ctx, listquery.Query{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range prios {
		if p.Name == name {
			return p.ID
		}
	}
	e.t.Fatalf("no priority %s in the dictionary", name)
	return uuid.Nil
}

// TestS9_ExplicitPriorityOutlivesTheDefault: in a project whose default priority is low, a
// training submitted with "priorityClass":"low" keeps low when the default becomes medium, and
// one submitted without a priority follows the default to medium. In a project that forbids
// priority changes, asking for its own default is accepted, labelled and resolved without a
// PriorityChangeNotAllowed warning; asking for another is refused.
func TestS9_ExplicitPriorityOutlivesTheDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	low := e.priorityID("low")
	ns := e.project("keep", 4, store.PolicyUpdate{DefaultPriorityID: opt(low)})
	lockedNS := e.project("fixed", 0, store.PolicyUpdate{DefaultPriorityID: opt(low), AllowPriorityChange: opt(false)})
	keep, err := e.store.ProjectNamed(e.ctx, "keep-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := e.store.ProjectNamed(e.ctx, "fixed-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	submit := func(project uuid.UUID, name, priority string) (int, map[string]any) {
		prio := ""
		if priority != "" {
			prio = fmt.Sprintf(`,"priorityClass":%q`, priority)
		}
		return e.a.do(t, "POST", "/api/v1/workloads/trainings", fmt.Sprintf(
			`{"name":%q,"projectId":%q,"spec":{"image":"example.invalid/train:1","compute":{"gpuDevicesRequest":1,"cpuCoreRequest":0.1}%s}}`, name, project, prio))
	}
	uids := map[string]string{}
	for _, s := range []struct {
		project        uuid.UUID
		name, priority string
	}{{keep.ID, "asked", "low"}, {keep.ID, "left", ""}, {fixed.ID, "fixed", "low"}} {
		status, m := submit(s.project, s.name, s.priority)
		if status != 202 {
			t.Fatalf("POST %s = %d %v", s.name, status, m)
		}
		uids[s.name], _ = m["workloadId"].(string)
	}
	if status, m := submit(fixed.ID, "other", "high"); status != 400 {
		t.Errorf("high in a project that forbids priority changes = %d %v, want 400", status, m)
	}
	for _, j := range []struct{ ns, name, want string }{{ns, "asked", "low"}, {ns, "left", ""}, {lockedNS, "fixed", "low"}} {
		job, err := e.client.BatchV1().Jobs(j.ns).Get(e.ctx, j.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := job.Labels["priorityClassName"]; got != j.want {
			t.Errorf("Job %s has priorityClassName %q, want %q", j.name, got, j.want)
		}
	}
	e.eventually("the three run, recorded at low by the scheduler", time.Minute, func() bool {
		for _, uid := range uids {
			if r, err := e.store.WorkloadRecord(e.ctx, uid); err != nil || r.PriorityName != "low" || r.Phase != "Running" {
				return false
			}
		}
		return true
	})
	if evs := e.events(lockedNS, "fixed"); hasEvent(evs, "PriorityChangeNotAllowed") {
		t.Errorf("the label naming the locked project's own default was warned about: %s", fmtEvents(evs))
	}

	medium := e.priorityID("medium")
	if _, err := e.store.UpdateProject(e.ctx, keep.ID, store.ProjectUpdate{Policy: store.PolicyUpdate{DefaultPriorityID: opt(medium)}}, admin); err != nil {
		t.Fatal(err)
	}
	e.eventually("the workload left to the default follows it to medium", time.Minute, func() bool {
		return e.record(uids["left"]).PriorityName == "medium"
	})
	if got := e.record(uids["asked"]).PriorityName; got != "low" {
		t.Errorf("the workload submitted with low is at %s after the default changed, want low", got)
	}
}
