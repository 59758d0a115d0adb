package web

import (
	"net/http"
	"strings"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/labstack/echo/v4"
)

// Who may change which field of a department or project (docs/security.md "Who changes which
// organization field"). A field that changes only what happens inside a unit is the unit's
// managers' to change; a field that changes what other units receive needs the role of the
// unit above: a project's such fields a department admin of its department (or an admin), a
// department's an admin. Every organization route that changes these fields asks the one
// decision below, refusedFields, with the fields its request sets; a request that sets any
// field the caller may not change is refused whole.

// fieldRole is the role a field's change needs.
type fieldRole int

const (
	// unitManager: auth.ManageProject at the project (its research managers, and every
	// department admin and admin above it).
	unitManager fieldRole = iota
	// departmentManager: auth.ManageDepartment at the project (a department admin of its
	// department, or an admin).
	departmentManager
	// systemAdmin: auth.ManageSystem.
	systemAdmin
)

// allowed reports whether the caller holds role r at the project or department scope unit.
func (r fieldRole) allowed(id auth.Identity, unit auth.Scope) bool {
	switch r {
	case unitManager:
		return auth.Allowed(id, auth.ManageProject, unit)
	case departmentManager:
		return auth.Allowed(id, auth.ManageDepartment, unit)
	}
	return auth.Allowed(id, auth.ManageSystem, auth.System)
}

// allowedSomewhere reports whether the caller holds role r anywhere: the handlers refuse at
// once a field nobody the caller is may change, before reading the unit.
func (r fieldRole) allowedSomewhere(id auth.Identity) bool {
	switch r {
	case unitManager:
		return auth.AllowedSomewhere(id, auth.ManageProject)
	case departmentManager:
		return auth.AllowedSomewhere(id, auth.ManageDepartment)
	}
	return auth.Allowed(id, auth.ManageSystem, auth.System)
}

// who says who may change the n fields of a unit (kind "project" or "department") that need
// r, and why.
func (r fieldRole) who(kind string, n int) string {
	they, be, them := "they", "are", "them"
	if n == 1 {
		they, be, them = "it", "is", "it"
	}
	switch {
	case r == unitManager:
		return "only the project's research managers, a department admin of the project's department or an admin may change " + them
	case r == departmentManager:
		return they + " " + be + " the department's to decide, so only a department admin of the project's department or an admin may change " + them
	case kind == "department":
		return "a department's settings are its share of the cluster, so only an admin may change " + them
	}
	return "only an admin may change " + them
}

// fieldTable is who may change each field of one kind of unit, by the API's field names.
type fieldTable struct {
	kind  string // "project" or "department"
	roles map[string]fieldRole
}

// projectFieldRoles is the table for projects, by the API's field names. Each entry says why,
// from what the scheduler does with the field.
var projectFieldRoles = fieldTable{kind: "project", roles: map[string]fieldRole{
	// The project's identity and place: the department's to decide.
	"name": departmentManager, "departmentId": departmentManager, "namespaces": departmentManager,
	// Node pools it may use and its quotas there: deserved GPUs are a share of the
	// department's, limits and over-quota weights divide what siblings leave idle (S11, S14).
	"nodePools": departmentManager, "resources": departmentManager,
	// Priorities inside the project: with the project fenced (the default, S25) they order only
	// its own queue; opening it is the department's decision below.
	"policy.defaultPriorityId": unitManager, "policy.allowPriorityChange": unitManager,
	"policy.allowPreemptibilityChange": unitManager, "policy.minPriority": unitManager, "policy.maxPriority": unitManager,
	// Preemption inside the project (S16): victims are the project's own work, and how they are
	// evicted (S20) frees the same GPUs either way.
	"policy.preemptionOrder": unitManager, "policy.preemptionMode": unitManager,
	// minRuntimeSeconds spares the project's work from its own preemption (S16) only; reclaim
	// (S17) does not read it (scheduler reclaimRuntimeLeft vs minRuntimeLeft).
	"policy.minRuntimeSeconds": unitManager,
	// Strict queueing holds back the project's own queue only (S12).
	"policy.queueing": unitManager,
	// Queue priority among siblings past deserved quota (S25).
	"policy.priorityPolicy": departmentManager, "policy.priorityOffset": departmentManager,
	// How long the project's pending work waits before it may reclaim other projects' borrowed
	// work (S27): the grace their work gets.
	"policy.preemptionDelaySeconds": departmentManager,
	// Spares the project's borrowed GPUs from reclaim by the projects that are owed them (S17,
	// S27; reclaim reads the victim's setting). Those may be in other departments too: the
	// bound of a day (store.MaxReclaimMinRuntimeSeconds) is what keeps that short.
	"policy.reclaimMinRuntimeSeconds": departmentManager,
}}

// departmentFieldRoles is the table for departments: a department's every field reaches the
// other departments (its deserved GPUs are its share of the cluster, its queue priority orders
// it among them), so all are the admin's.
var departmentFieldRoles = fieldTable{kind: "department", roles: map[string]fieldRole{
	"name": systemAdmin, "resources": systemAdmin, "priorityPolicy": systemAdmin, "priorityOffset": systemAdmin,
}}

// refusedFields is the decision: of the fields a request sets, those the caller may not change
// (allowed says whether it holds a role), in the order given, and the widest role they need.
func refusedFields(table fieldTable, fields []string, allowed func(fieldRole) bool) ([]string, fieldRole) {
	var refused []string
	widest := unitManager
	for _, f := range fields {
		role, ok := table.roles[f]
		if !ok {
			role = systemAdmin // a field missing from the table is refused rather than let through
		}
		if !allowed(role) {
			refused = append(refused, f)
			widest = max(widest, role)
		}
	}
	return refused, widest
}

// fieldRefusal is the 403 for refused fields: the same sentence from every route and page.
func fieldRefusal(kind string, refused []string, need fieldRole) error {
	return &httpError{status: http.StatusForbidden, field: refused[0],
		message: "you may not change " + strings.Join(refused, ", ") + ": " + need.who(kind, len(refused)) + "; nothing was changed"}
}

// mayChangeFields checks fields against table for the unit at scope.
func mayChangeFields(c echo.Context, table fieldTable, fields []string, unit auth.Scope) error {
	id := identity(c)
	refused, need := refusedFields(table, fields, func(r fieldRole) bool { return r.allowed(id, unit) })
	if len(refused) > 0 {
		return fieldRefusal(table.kind, refused, need)
	}
	return nil
}

// mayChangeFieldsSomewhere refuses at once fields the caller may change on no unit at all.
func mayChangeFieldsSomewhere(c echo.Context, table fieldTable, fields []string) error {
	id := identity(c)
	refused, need := refusedFields(table, fields, func(r fieldRole) bool { return r.allowedSomewhere(id) })
	if len(refused) > 0 {
		return fieldRefusal(table.kind, refused, need)
	}
	return nil
}

// projectFieldsSet names the fields u sets, as the API names them.
func projectFieldsSet(u store.ProjectUpdate) []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(u.Name.Set, "name")
	add(u.DepartmentID.Set, "departmentId")
	add(u.Namespaces.Set, "namespaces")
	add(u.NodePools.Set, "nodePools")
	add(u.Resources.Set, "resources")
	p := u.Policy
	add(p.DefaultPriorityID.Set, "policy.defaultPriorityId")
	add(p.AllowPriorityChange.Set, "policy.allowPriorityChange")
	add(p.AllowPreemptibilityChange.Set, "policy.allowPreemptibilityChange")
	add(p.MinPriority.Set, "policy.minPriority")
	add(p.MaxPriority.Set, "policy.maxPriority")
	add(p.PreemptionOrder.Set, "policy.preemptionOrder")
	add(p.PreemptionMode.Set, "policy.preemptionMode")
	add(p.MinRuntimeSeconds.Set, "policy.minRuntimeSeconds")
	add(p.Queueing.Set, "policy.queueing")
	add(p.PriorityPolicy.Set, "policy.priorityPolicy")
	add(p.PriorityOffset.Set, "policy.priorityOffset")
	add(p.PreemptionDelaySeconds.Set, "policy.preemptionDelaySeconds")
	add(p.ReclaimMinRuntimeSeconds.Set, "policy.reclaimMinRuntimeSeconds")
	return out
}

// departmentFieldsSet names the fields u sets, as the API names them.
func departmentFieldsSet(u store.DepartmentUpdate) []string {
	var out []string
	for _, f := range []struct {
		set  bool
		name string
	}{{u.Name.Set, "name"}, {u.Resources.Set, "resources"}, {u.PriorityPolicy.Set, "priorityPolicy"}, {u.PriorityOffset.Set, "priorityOffset"}} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// mayChangeProjectFields says whether the caller may change these fields of project p: what
// the console offers.
func mayChangeProjectFields(c echo.Context, p store.Project, fields ...string) bool {
	return mayChangeFields(c, projectFieldRoles, fields, projectScope(p)) == nil
}
