package server

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/dev/demo"
	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
)

// TestMain stops the private PostgreSQL of the store tests when the package's tests end.
func TestMain(m *testing.M) { testdb.Main(m) }

// demoDepartments is the department of each of the demo's projects (docs/demo.md); the demo
// seeds two node pools, two departments and these five projects.
var demoDepartments = map[string]string{
	"vision": "research", "nlp": "research", "speech": "research", "search": "product", "ads": "product",
}

// Seeding the demo organization (internal/dev/demo) twice creates it once; the scheduler's
// settings then carry the projects' namespaces, quotas and policies, and the pools' topology.
func TestSettingsOfTheDemoOrganization(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	created, err := demo.SeedOrganization(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 2 + 2 + len(demoDepartments); created != want { // topology, pools, departments, projects
		t.Errorf("created %d, want %d", created, want)
	}
	if created, err := demo.SeedOrganization(ctx, st); err != nil || created != 0 {
		t.Errorf("seeding again: created %d, err %v", created, err)
	}
	s, err := loadSettings(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	pools := map[string]scheduler.NodePool{}
	for _, p := range s.NodePools {
		pools[p.Name] = p
	}
	if p := pools["h100"]; p.LabelKey != devcluster.LabelNodePool || p.LabelValue != "h100" || p.Placement != scheduler.Spread {
		t.Errorf("pool h100: %+v", p)
	}
	projects := map[string]scheduler.Project{}
	for _, p := range s.Projects {
		projects[p.Name] = p
	}
	if len(projects) != len(demoDepartments) {
		t.Fatalf("%d projects", len(projects))
	}
	for project, department := range demoDepartments {
		if s.NamespaceProject[project] != project {
			t.Errorf("namespace %s belongs to %q", project, s.NamespaceProject[project])
		}
		if projects[project].Department != department {
			t.Errorf("project %s in department %q", project, projects[project].Department)
		}
	}
	if projects["nlp"].Policy.Queueing != scheduler.Strict || projects["vision"].Policy.PreemptionMode != scheduler.Suspend ||
		!projects["search"].Policy.ForbidPriorityChange || projects["ads"].Policy.PreemptionOrder != scheduler.NewestFirst {
		t.Errorf("policies: nlp %+v, vision %+v, search %+v, ads %+v", projects["nlp"].Policy, projects["vision"].Policy, projects["search"].Policy, projects["ads"].Policy)
	}
	for name, p := range projects {
		if p.Policy.MinRuntimeSeconds != 60 || p.Policy.ReclaimMinRuntimeSeconds != 60 {
			t.Errorf("project %s spares its work for %d s from preemption and %d s from reclaim, want a minute from each",
				name, p.Policy.MinRuntimeSeconds, p.Policy.ReclaimMinRuntimeSeconds)
		}
	}
	if q := projects["ads"].Quotas["a100"]; q.Deserved != 6 || q.Limit != 14 {
		t.Errorf("ads in a100: %+v", q)
	}
	if got := projects["vision"].NodePools; len(got) < 2 || got[0] != "a100" || got[1] != "h100" {
		t.Errorf("vision tries pools %v, want a100, h100 first", got)
	}

	// The simulation's copy of the organization (demo.Organization) is what was seeded.
	simPools, simDepartments, simProjects := demo.Organization()
	seeded := s.Projects
	for i := range seeded {
		if _, err := uuid.Parse(seeded[i].ID); err != nil {
			t.Errorf("project %s has id %q, want its store id (its workloads are recorded with it)", seeded[i].Name, seeded[i].ID)
		}
		seeded[i].NodePools = nil // the simulation's projects try every pool, by name, as these do
		seeded[i].ID = ""         // and have no id: the simulation has no database
	}
	if d := cmp.Diff(simProjects, seeded); d != "" {
		t.Errorf("demo.Organization's projects are not the seeded ones (-simulated +seeded):\n%s", d)
	}
	if d := cmp.Diff(simDepartments, s.Departments); d != "" {
		t.Errorf("demo.Organization's departments are not the seeded ones (-simulated +seeded):\n%s", d)
	}
	if d := cmp.Diff(demo.Topologies(), s.Topologies); d != "" {
		t.Errorf("demo.Topologies are not the seeded ones (-simulated +seeded):\n%s", d)
	}
	labelled := slices.DeleteFunc(slices.Clone(s.NodePools), func(p scheduler.NodePool) bool { return p.LabelKey == "" })
	if d := cmp.Diff(simPools, labelled); d != "" {
		t.Errorf("demo.Organization's node pools are not the seeded ones (-simulated +seeded):\n%s", d)
	}
}
