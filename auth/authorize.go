package auth

import "fmt"

// Role is one of the roles of docs/security.md "Roles and scopes".
type Role string

const (
	RoleAdmin           Role = "admin"
	RoleDepartmentAdmin Role = "department-admin"
	RoleResearchManager Role = "research-manager"
	RoleResearcher      Role = "researcher"
	RoleViewer          Role = "viewer"
)

// Roles lists the roles from most to least powerful.
var Roles = []Role{RoleAdmin, RoleDepartmentAdmin, RoleResearchManager, RoleResearcher, RoleViewer}

// ParseRole checks a role name.
func ParseRole(s string) (Role, error) {
	for _, r := range Roles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("role %q is not known; use admin, department-admin, research-manager, researcher or viewer", s)
}

func (r Role) rank() int {
	for i, x := range Roles {
		if x == r {
			return len(Roles) - i
		}
	}
	return 0
}

// ScopeType is where a role applies.
type ScopeType string

const (
	ScopeSystem     ScopeType = "system"
	ScopeDepartment ScopeType = "department"
	ScopeProject    ScopeType = "project"
)

// Scope is what an action touches or where a grant applies. A project scope names its
// department too, so that a department grant covers the department's projects.
type Scope struct {
	Type       ScopeType
	ID         string // department or project id; empty for system
	Department string // for a project: its department's id
}

// System is the whole installation.
var System = Scope{Type: ScopeSystem}

// Department and Project build scopes.
func Department(id string) Scope { return Scope{Type: ScopeDepartment, ID: id} }
func Project(id, departmentID string) Scope {
	return Scope{Type: ScopeProject, ID: id, Department: departmentID}
}

// ValidateGrant checks that a role may be bound at a scope: admin only at system,
// department-admin only at a department.
func ValidateGrant(r Role, s Scope) error {
	switch {
	case s.Type != ScopeSystem && s.Type != ScopeDepartment && s.Type != ScopeProject:
		return fmt.Errorf("scope type %q is not known; use system, department or project", s.Type)
	case s.Type == ScopeSystem && s.ID != "":
		return fmt.Errorf("a system scope has no id")
	case s.Type != ScopeSystem && s.ID == "":
		return fmt.Errorf("a %s scope needs the %s's id", s.Type, s.Type)
	case r == RoleAdmin && s.Type != ScopeSystem:
		return fmt.Errorf("admin is a system role; bind it at the system scope")
	case r == RoleDepartmentAdmin && s.Type != ScopeDepartment:
		return fmt.Errorf("department-admin is bound at a department scope")
	}
	return nil
}

// Grant is a role held at a scope.
type Grant struct {
	Role  Role
	Scope Scope
}

// covers reports whether a grant at g applies to scope s.
func (g Grant) covers(s Scope) bool {
	switch g.Scope.Type {
	case ScopeSystem:
		return true
	case ScopeDepartment:
		return (s.Type == ScopeDepartment && s.ID == g.Scope.ID) || (s.Type == ScopeProject && s.Department == g.Scope.ID)
	case ScopeProject:
		return s.Type == ScopeProject && s.ID == g.Scope.ID
	}
	return false
}

// Action is something a caller asks to do.
type Action string

const (
	// Read shows an object (lists are filtered by it).
	Read Action = "read"
	// ManageSystem changes installation-wide settings: workload types and categories, node
	// pools, departments, access rules at system scope, API keys.
	ManageSystem Action = "manage-system"
	// ManageDepartment changes projects and quotas inside a department.
	ManageDepartment Action = "manage-department"
	// ManageProject changes a project's policy and members.
	ManageProject Action = "manage-project"
	// EditAnyWorkload changes priority and preemptibility of any workload in a project.
	EditAnyWorkload Action = "edit-any-workload"
	// SubmitWorkload submits workloads in a project.
	SubmitWorkload Action = "submit-workload"
	// EditOwnWorkload changes priority and preemptibility of one's own workloads (the handler
	// checks ownership and the project policy).
	EditOwnWorkload Action = "edit-own-workload"
)

// may is the table of docs/security.md "Roles and scopes": what each role may do within its scope.
var may = map[Role][]Action{
	RoleAdmin:           {Read, ManageSystem, ManageDepartment, ManageProject, EditAnyWorkload, SubmitWorkload, EditOwnWorkload},
	RoleDepartmentAdmin: {Read, ManageDepartment, ManageProject, EditAnyWorkload, SubmitWorkload, EditOwnWorkload},
	RoleResearchManager: {Read, ManageProject, EditAnyWorkload, SubmitWorkload, EditOwnWorkload},
	RoleResearcher:      {Read, SubmitWorkload, EditOwnWorkload},
	RoleViewer:          {Read},
}

// Allowed is the one authorization rule: the caller may take action at scope when one of its
// grants covers the scope and its role may take the action.
func Allowed(id Identity, action Action, scope Scope) bool {
	for _, g := range id.Grants {
		if !g.covers(scope) {
			continue
		}
		for _, a := range may[g.Role] {
			if a == action {
				return true
			}
		}
	}
	return false
}

// AllowedSomewhere reports whether some grant of the caller allows action at its own scope:
// handlers use it to refuse at once (403) callers who may not take the action anywhere, before
// looking at the object the action concerns.
func AllowedSomewhere(id Identity, action Action) bool {
	for _, g := range id.Grants {
		for _, a := range may[g.Role] {
			if a == action {
				return true
			}
		}
	}
	return false
}

// HighestRole is the most powerful role among grants, "" when there is none.
func HighestRole(grants []Grant) Role {
	var best Role
	for _, g := range grants {
		if g.Role.rank() > best.rank() {
			best = g.Role
		}
	}
	return best
}
