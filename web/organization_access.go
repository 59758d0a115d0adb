package web

import (
	"context"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// Who sees and changes which departments and projects (docs/security.md "Departments, projects and node pools"):
//
//   - Lists and gets of departments and projects show only what can(c, auth.Read, scope)
//     allows; a department or project the caller may not read answers 404, like one that does
//     not exist, so that ids do not reveal what exists. Node pools are shared infrastructure
//     without per-project data: every signed-in caller sees them.
//   - Departments (create, rename, quotas, delete) are the admin's: a department's quota is its
//     share of the cluster.
//   - Projects: creating and deleting need auth.ManageDepartment at the project (admin, or
//     department-admin of its department); each field a change or a creation sets needs the
//     role the field table gives it (organization_fields.go): the fields that stay inside the
//     project are its research managers' too, those that reach other units need the role
//     above. A move needs auth.ManageDepartment at both departments.
//
// Changes are checked against the project as it is under the change's row lock (a
// store.ProjectPatch), so a project moved meanwhile to another department is judged where it is.

func departmentScope(d store.Department) auth.Scope { return auth.Department(d.ID.String()) }

func projectScope(p store.Project) auth.Scope {
	return auth.Project(p.ID.String(), p.DepartmentID.String())
}

// authorizeSomewhere refuses at once (403) a caller whom no grant allows action anywhere.
func authorizeSomewhere(c echo.Context, action auth.Action, what string) error {
	if id := identity(c); id.Authenticated() && auth.AllowedSomewhere(id, action) {
		return nil
	}
	return authorize(c, action, auth.System, what)
}

func projectNotFound(id uuid.UUID) error { return store.NotFound("project %s was not found", id) }

func departmentNotFound(id uuid.UUID) error {
	return store.NotFound("department %s was not found", id)
}

// readableDepartments filters a department list by can(c, auth.Read, ...). Department lists
// are not paged, so filtering after the query keeps every count right.
func readableDepartments(c echo.Context, ds []store.Department) []store.Department {
	out := make([]store.Department, 0, len(ds))
	for _, d := range ds {
		if can(c, auth.Read, departmentScope(d)) {
			out = append(out, d)
		}
	}
	return out
}

// visibleDepartments lists the departments the caller may read.
func (o organization) visibleDepartments(c echo.Context) func(context.Context, listquery.Query) ([]store.Department, error) {
	return func(ctx context.Context, q listquery.Query) ([]store.Department, error) {
		ds, err := o.store.Departments(ctx, q)
		return readableDepartments(c, ds), err
	}
}

// readableDepartment returns one department, or 404 when the caller may not read it.
func (o organization) readableDepartment(c echo.Context) func(context.Context, uuid.UUID) (store.Department, error) {
	return func(ctx context.Context, id uuid.UUID) (store.Department, error) {
		d, err := o.store.Department(ctx, id)
		if err == nil && !can(c, auth.Read, departmentScope(d)) {
			return store.Department{}, departmentNotFound(id)
		}
		return d, err
	}
}

// manageable are the departments of ds the caller may create projects in or move them to:
// what the pages offer in their department selects.
func manageable(c echo.Context, ds []views.Department) []views.Department {
	var out []views.Department
	for _, d := range ds {
		if can(c, auth.ManageDepartment, auth.Department(d.ID)) {
			out = append(out, d)
		}
	}
	return out
}

// projectListScope is the set of projects the caller may read, for the store to filter by in
// SQL, so that pages and their next offsets count only those.
func (o organization) projectListScope(c echo.Context) (store.ProjectScope, error) {
	if can(c, auth.Read, auth.System) {
		return store.ProjectScope{All: true}, nil
	}
	scope := store.ProjectScope{IDs: []uuid.UUID{}}
	if len(identity(c).Grants) == 0 {
		return scope, nil
	}
	refs, err := o.store.ProjectRefs(c.Request().Context())
	if err != nil {
		return scope, err
	}
	for _, p := range refs {
		if can(c, auth.Read, auth.Project(p.ID.String(), p.DepartmentID.String())) {
			scope.IDs = append(scope.IDs, p.ID)
		}
	}
	return scope, nil
}

// visibleProjects lists one page of the projects the caller may read.
func (o organization) visibleProjects(c echo.Context, q listquery.Query) ([]store.Project, *int, error) {
	scope, err := o.projectListScope(c)
	if err != nil {
		return nil, nil, err
	}
	return o.store.VisibleProjects(c.Request().Context(), q, scope)
}

// countVisibleProjects counts every page of visibleProjects.
func (o organization) countVisibleProjects(c echo.Context, q listquery.Query) (int, error) {
	scope, err := o.projectListScope(c)
	if err != nil {
		return 0, err
	}
	return o.store.CountVisibleProjects(c.Request().Context(), q, scope)
}

// readableProject returns one project, or 404 when the caller may not read it.
func (o organization) readableProject(c echo.Context) func(context.Context, uuid.UUID) (store.Project, error) {
	return func(ctx context.Context, id uuid.UUID) (store.Project, error) {
		p, err := o.store.Project(ctx, id)
		if err == nil && !can(c, auth.Read, projectScope(p)) {
			return store.Project{}, projectNotFound(id)
		}
		return p, err
	}
}

// mayChangeProject checks u against the project p as it is (read under the row lock): each
// field it sets against the field table (organization_fields.go), and a move against both
// departments.
func mayChangeProject(c echo.Context, p store.Project, u store.ProjectUpdate) error {
	scope := projectScope(p)
	if !can(c, auth.Read, scope) {
		return projectNotFound(p.ID)
	}
	if err := mayChangeFields(c, projectFieldRoles, projectFieldsSet(u), scope); err != nil {
		return err
	}
	if u.DepartmentID.Set && u.DepartmentID.Value != nil && *u.DepartmentID.Value != p.DepartmentID {
		return authorize(c, auth.ManageDepartment, auth.Project(p.ID.String(), u.DepartmentID.Value.String()),
			"move project "+p.Name+" to that department (you may move projects only between departments you manage)")
	}
	return nil
}

// projectChange is the patch of a project change: u, if the caller may make it.
func projectChange(c echo.Context, u store.ProjectUpdate) store.ProjectPatch {
	return func(p store.Project) (store.ProjectUpdate, error) {
		return u, mayChangeProject(c, p, u)
	}
}

// mayCreateProject checks that the caller may create a project in the department u names
// (without a department the store's sentence says one is needed).
func mayCreateProject(c echo.Context, u store.ProjectUpdate) error {
	if !u.DepartmentID.Set || u.DepartmentID.Value == nil {
		return nil
	}
	dept := u.DepartmentID.Value.String()
	if err := authorize(c, auth.ManageDepartment, auth.Department(dept), "create a project in that department"); err != nil {
		return err
	}
	return mayChangeFields(c, projectFieldRoles, projectFieldsSet(u), auth.Project("", dept))
}

// mayDeleteProject checks a delete against the project as it is, under the row lock.
func mayDeleteProject(c echo.Context) func(store.Project) error {
	return func(p store.Project) error {
		scope := projectScope(p)
		if !can(c, auth.Read, scope) {
			return projectNotFound(p.ID)
		}
		return authorize(c, auth.ManageDepartment, scope, "delete project "+p.Name)
	}
}
