package cli

import (
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

func (a *app) projectsCommand() *cobra.Command {
	return listCommand(a, listing[project]{
		use:     "projects",
		short:   "List the projects you may see, their namespaces and priority policy",
		long:    `List the projects you may see: department, namespaces, and what their policy allows (priority changes and range, preemptibility changes).`,
		example: "  arbiter projects\n  arbiter projects -o json",
		path:    "/api/v1/org-unit/projects", query: url.Values{"limit": {"500"}}, key: "projects",
		header: []any{"NAME", "DEPARTMENT", "NAMESPACES", "PRIORITY CHANGE", "PREEMPTIBILITY CHANGE"},
		row: func(p project) []any {
			return []any{p.Name, orDash(p.DepartmentName), orDash(strings.Join(p.Namespaces, ",")), priorityPolicy(p), allowed(p.Policy.AllowPreemptibilityChange)}
		},
	})
}

// priorityPolicy says what priorities a project's workloads may be given.
func priorityPolicy(p project) string {
	if p.Policy.AllowPriorityChange != nil && !*p.Policy.AllowPriorityChange {
		return "no"
	}
	lo, hi := "", ""
	if p.Policy.MinPriority != nil {
		lo = *p.Policy.MinPriority
	}
	if p.Policy.MaxPriority != nil {
		hi = *p.Policy.MaxPriority
	}
	if lo == "" && hi == "" {
		return "yes"
	}
	return orDash(lo) + ".." + orDash(hi)
}

func allowed(b *bool) string {
	if b != nil && !*b {
		return "no"
	}
	return "yes"
}
