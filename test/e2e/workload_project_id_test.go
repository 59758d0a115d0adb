package e2e

import (
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
)

// TestWorkloadsOfARenamedProjectStayItsOwn: a Job the scheduler runs is recorded with its
// project's id, so after the project is renamed and another department makes a project with
// the old name, the renamed project's viewer still reads it and that department's admin does not.
func TestWorkloadsOfARenamedProjectStayItsOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 8)
	ns := e.project("keep", 8, store.PolicyUpdate{})
	proj, err := e.store.ProjectNamed(e.ctx, "keep-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	job := e.job(jobSpec{name: "train", namespace: ns, labels: labels("low", "preemptible")})
	uid := string(job.UID)
	e.eventually("train runs and is recorded as Running", 2*time.Minute, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, uid)
		return e.running(ns, "train") == 1 && err == nil && r.Phase == "Running"
	})
	if r := e.record(uid); r.ProjectID == nil || *r.ProjectID != proj.ID || r.ProjectName != proj.Name {
		t.Errorf("train is recorded in project %v %q, want %s %q", r.ProjectID, r.ProjectName, proj.ID, proj.Name)
	}
	viewer, _ := e.apiKey("viewer", proj.ID)

	if _, err := e.store.UpdateProject(e.ctx, proj.ID, store.ProjectUpdate{Name: opt("kept-" + e.id)}, admin); err != nil {
		t.Fatal(err)
	}
	other, err := e.store.CreateDepartment(e.ctx, store.DepartmentUpdate{Name: opt("other-" + e.id)}, admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateProject(e.ctx, store.ProjectUpdate{Name: opt("keep-" + e.id), DepartmentID: opt(other.ID)}, admin); err != nil {
		t.Fatal(err)
	}
	keyID := uuid.New()
	otherAdmin, hash := auth.NewAPIKey(keyID)
	if _, err := e.store.CreateAPIKey(e.ctx, store.NewAPIKey{ID: keyID, Name: "other-admin-" + e.id, Role: "department-admin", ScopeType: "department",
		ScopeID: &other.ID, ExpiresAt: time.Now().Add(time.Hour), SecretHash: hash}, admin); err != nil {
		t.Fatal(err)
	}

	if status, body := e.call(viewer, "GET", "/api/v1/workloads/"+uid, ""); status != 200 {
		t.Errorf("the renamed project's viewer: GET = %d %v, want 200", status, body)
	}
	if status, body := e.call(otherAdmin, "GET", "/api/v1/workloads/"+uid, ""); status != 404 {
		t.Errorf("the new keep's department admin: GET = %d %v, want 404", status, body)
	}
	if status, body := e.call(otherAdmin, "PATCH", "/api/v1/workloads/"+uid, `{"priority":"high"}`); status != 404 {
		t.Errorf("the new keep's department admin: PATCH = %d %v, want 404", status, body)
	}
	if _, body := e.call(otherAdmin, "GET", "/api/v1/workloads?deleted=true", ""); len(body["workloads"].([]any)) != 0 {
		t.Errorf("the new keep's department admin lists %v", body["workloads"])
	}
	// Finished, it stays its project's history.
	background := metav1.DeletePropagationBackground
	if err := e.client.BatchV1().Jobs(ns).Delete(e.ctx, "train", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	e.eventually("train is recorded finished", 2*time.Minute, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, uid)
		return err == nil && r.FinishedAt != nil
	})
	if r := e.record(uid); r.ProjectID == nil || *r.ProjectID != proj.ID {
		t.Errorf("finished, train is recorded in project %v, want %s", r.ProjectID, proj.ID)
	}
	if status, body := e.call(viewer, "GET", "/api/v1/workloads/"+uid, ""); status != 200 {
		t.Errorf("the renamed project's viewer, once it finished: GET = %d %v, want 200", status, body)
	}
}
