package auth

import "slices"

// roleLabels are each role's stable integer id, its title and what it is for (docs/security.md
// "Roles and scopes"). The ids are part of the API (Run:ai's names roles by integers): a role
// keeps its id for good, and a new role takes a new one.
var roleLabels = map[Role]struct {
	id                 int32
	title, description string
}{
	RoleAdmin:           {1, "System administrator", "everything: workload types and categories, node pools, departments, projects, access rules, API keys; bound at the system scope"},
	RoleDepartmentAdmin: {2, "Department administrator", "projects and quotas inside the department, and everything a research manager may do there; bound at a department"},
	RoleResearchManager: {3, "Research manager", "the project policy fields that stay inside the project, and members; priority and preemptibility of any workload there"},
	RoleResearcher:      {4, "Researcher", "submit workloads in the project; change priority and preemptibility of one's own workloads within the project policy"},
	RoleViewer:          {5, "Viewer", "read only"},
}

// ID is the role's stable integer id.
func (r Role) ID() int32 { return roleLabels[r].id }

// Title is the role's name for people, such as "System administrator".
func (r Role) Title() string { return roleLabels[r].title }

// Description says what the role may do, in a sentence.
func (r Role) Description() string { return roleLabels[r].description }

// RoleByID is the role with the integer id, and false when there is none.
func RoleByID(id int64) (Role, bool) {
	for _, r := range Roles {
		if int64(r.ID()) == id {
			return r, true
		}
	}
	return "", false
}

// Actions are the actions the role may take within its scope: its row of the one
// authorization table that Allowed reads.
func (r Role) Actions() []Action { return slices.Clone(may[r]) }
