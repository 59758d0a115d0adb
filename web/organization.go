package web

import (
	"context"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
)

// OrganizationStore is what the organization routes need from the store.
type OrganizationStore interface {
	NodePools(ctx context.Context, q listquery.Query) ([]store.NodePool, error)
	NodePool(ctx context.Context, id uuid.UUID) (store.NodePool, error)
	CreateNodePool(ctx context.Context, u store.NodePoolUpdate, by store.Actor) (store.NodePool, error)
	UpdateNodePool(ctx context.Context, id uuid.UUID, u store.NodePoolUpdate, by store.Actor) (store.NodePool, error)
	DeleteNodePool(ctx context.Context, id uuid.UUID, by store.Actor) error
	NodePoolFairness(ctx context.Context, id uuid.UUID) (store.NodePoolFairness, error)
	NodePoolFairnesses(ctx context.Context) (map[uuid.UUID]store.NodePoolFairness, error)
	SetNodePoolFairness(ctx context.Context, id uuid.UUID, u store.NodePoolFairnessUpdate, by store.Actor) (store.NodePoolFairness, error)
	Departments(ctx context.Context, q listquery.Query) ([]store.Department, error)
	Department(ctx context.Context, id uuid.UUID) (store.Department, error)
	CreateDepartment(ctx context.Context, u store.DepartmentUpdate, by store.Actor) (store.Department, error)
	UpdateDepartment(ctx context.Context, id uuid.UUID, u store.DepartmentUpdate, by store.Actor) (store.Department, error)
	DeleteDepartment(ctx context.Context, id uuid.UUID, by store.Actor) error
	PatchDepartment(ctx context.Context, id uuid.UUID, patch store.DepartmentPatch, by store.Actor) (store.Department, error)
	VisibleProjects(ctx context.Context, q listquery.Query, scope store.ProjectScope) ([]store.Project, *int, error)
	CountVisibleProjects(ctx context.Context, q listquery.Query, scope store.ProjectScope) (int, error)
	ProjectRefs(ctx context.Context) ([]store.ProjectRef, error)
	Project(ctx context.Context, id uuid.UUID) (store.Project, error)
	CreateProject(ctx context.Context, u store.ProjectUpdate, by store.Actor) (store.Project, error)
	PatchProject(ctx context.Context, id uuid.UUID, patch store.ProjectPatch, by store.Actor) (store.Project, error)
	DeleteProjectIf(ctx context.Context, id uuid.UUID, check func(store.Project) error, by store.Actor) error
	NetworkTopologyStore
}

// OrgStatusSource reports live usage from the scheduler's last cycle, by name. Without a
// cluster (no scheduler) the web layer uses zeros.
type OrgStatusSource interface {
	NodePoolStatus(pool string) views.NodePoolStatus
	// Usage is what a "project" or "department" (kind) named name uses in pool.
	Usage(kind, name, pool string) views.Usage
}

type zeroOrgStatus struct{}

func (zeroOrgStatus) NodePoolStatus(string) views.NodePoolStatus { return views.NodePoolStatus{} }
func (zeroOrgStatus) Usage(string, string, string) views.Usage   { return views.Usage{} }

// organization holds the organization routes' dependencies.
type organization struct {
	store   OrganizationStore
	status  OrgStatusSource
	cluster string // the installation's one cluster's id (Deps.ClusterID)
}

func newOrganization(d Deps) organization {
	o := organization{store: d.Organization, status: d.OrgStatus, cluster: d.ClusterID}
	if o.status == nil {
		o.status = zeroOrgStatus{}
	}
	return o
}
