package web

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// runAIResource is one of Run:ai's resource types (its ResourceType), with its display name
// and group (ResourceTypeGroupId).
type runAIResource struct{ resourceType, displayName, groupID string }

var (
	resDepartments        = runAIResource{"department", "Departments", "organization"}
	resProjects           = runAIResource{"project", "Projects", "organization"}
	resNodePools          = runAIResource{"nodepools", "Node pools", "physical-resource"}
	resNodes              = runAIResource{"nodes", "Nodes", "physical-resource"}
	resClusters           = runAIResource{"cluster", "Clusters", "physical-resource"}
	resOverview           = runAIResource{"dashboards-overview", "Overview", "dashboard"}
	resAccessRules        = runAIResource{"access_rules", "Access rules", "iam"}
	resRoles              = runAIResource{"roles", "Roles", "iam"}
	resServiceAccounts    = runAIResource{"service-account", "Service accounts (API keys)", "iam"}
	resWorkloadProperties = runAIResource{"workload-properties", "Workload types, categories and priorities", "workload"}
	// resWorkloads are the workloads and the kinds Run:ai names apart, which Arbiter's rules
	// treat alike.
	resWorkloads = []runAIResource{{"workloads", "Workloads", "workload"}, {"trainings", "Trainings", "workload"},
		{"workspaces", "Workspaces", "workload"}, {"inferences", "Inferences", "workload"}}
)

// runAIActions are Run:ai's actions on a resource, in the order permissions list them.
var runAIActions = []string{"create", "read", "update", "delete"}

// runAIPermit is what one of Arbiter's actions allows on one of Run:ai's resources.
type runAIPermit struct {
	resource runAIResource
	actions  []string
}

func permits(resources []runAIResource, actions ...string) []runAIPermit {
	out := make([]runAIPermit, len(resources))
	for i, r := range resources {
		out[i] = runAIPermit{r, actions}
	}
	return out
}

// runAIPermitsOf says what each of Arbiter's actions (auth.Action) allows in Run:ai's terms.
// A role's permissions are those of the actions its row of Arbiter's one authorization table
// holds (auth.Role.Actions), so a role and its permissions cannot disagree; every action has
// an entry (TestEveryActionIsARunAIPermission).
var runAIPermitsOf = map[auth.Action][]runAIPermit{
	auth.Read: append(permits([]runAIResource{resDepartments, resProjects, resNodePools, resNodes, resClusters, resOverview,
		resWorkloadProperties, resRoles}, "read"), permits(resWorkloads, "read")...),
	auth.ManageSystem: append(permits([]runAIResource{resDepartments, resNodePools}, "create", "update", "delete"),
		runAIPermit{resWorkloadProperties, []string{"update"}},
		runAIPermit{resAccessRules, []string{"create", "read", "delete"}},
		runAIPermit{resServiceAccounts, []string{"create", "read", "delete"}}),
	auth.ManageDepartment: {{resProjects, []string{"create", "update", "delete"}}},
	auth.ManageProject:    {{resProjects, []string{"update"}}},
	auth.EditAnyWorkload:  permits(resWorkloads, "update", "delete"),
	auth.SubmitWorkload:   permits(resWorkloads, "create"),
	auth.EditOwnWorkload:  permits(resWorkloads, "update", "delete"),
}

// runAIPermissions are the permissions of the roles, merged: each resource once, in the order
// first met, with its actions in Run:ai's order.
func runAIPermissions(roles ...auth.Role) []views.RunAIPermission {
	var order []runAIResource
	actions := map[runAIResource]map[string]bool{}
	for _, role := range roles {
		for _, a := range role.Actions() {
			for _, p := range runAIPermitsOf[a] {
				if actions[p.resource] == nil {
					order = append(order, p.resource)
					actions[p.resource] = map[string]bool{}
				}
				for _, x := range p.actions {
					actions[p.resource][x] = true
				}
			}
		}
	}
	out := []views.RunAIPermission{}
	for _, r := range order {
		p := views.RunAIPermission{ResourceType: r.resourceType, DisplayName: r.displayName, GroupID: r.groupID, Actions: []string{}}
		for _, x := range runAIActions {
			if actions[r][x] {
				p.Actions = append(p.Actions, x)
			}
		}
		out = append(out, p)
	}
	return out
}

// rolesDefinedAt is when Arbiter's roles got their ids: they are built in, never made or
// changed through the API, so this constant is their createdAt and updatedAt.
var rolesDefinedAt = time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)

// runAIRole is role in Run:ai's RoleV1 shape.
func runAIRole(role auth.Role) views.RunAIRole {
	return views.RunAIRole{ID: role.ID(), Name: role.Title(), ArbiterRole: string(role), Description: role.Description(),
		Permissions: runAIPermissions(role), CreatedAt: rolesDefinedAt, UpdatedAt: rolesDefinedAt, CreatedBy: "system",
		Custom: false, Enabled: true, EffectiveEnabled: true}
}

// listRoles is Run:ai's get_roles_v1: Arbiter's five roles, from most to least powerful.
// They are what docs/security.md says of every role, so every signed-in caller may read them.
func (h *runAIAuthorization) listRoles(c echo.Context) error {
	return c.JSON(http.StatusOK, mapSlice(auth.Roles, runAIRole))
}

// getRole is Run:ai's get_role_v1: the role with the path's id.
func (h *runAIAuthorization) getRole(c echo.Context) error {
	raw := c.Param("roleIdPath")
	n, err := strconv.ParseInt(raw, 10, 32)
	if err != nil || n < 0 {
		return badRequest("%q is not a role id; use one of %s", raw, roleChoices())
	}
	role, ok := auth.RoleByID(n)
	if !ok {
		return store.NotFound("role %s is not one of Arbiter's roles; they are %s", raw, roleChoices())
	}
	return c.JSON(http.StatusOK, runAIRole(role))
}

// permissions is Run:ai's get_permissions: what the caller's roles allow, merged over all
// their grants whatever their scope (each grant allows it within its own scope).
func (h *runAIAuthorization) permissions(c echo.Context) error {
	var roles []auth.Role
	for _, g := range identity(c).Grants {
		if !slices.Contains(roles, g.Role) {
			roles = append(roles, g.Role)
		}
	}
	slices.SortFunc(roles, func(a, b auth.Role) int { return int(a.ID() - b.ID()) })
	return c.JSON(http.StatusOK, runAIPermissions(roles...))
}
