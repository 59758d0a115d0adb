package cli

import (
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

func (a *app) projectsCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "projects",
		Short:   "List the projects you may see, their namespaces and priority policy",
		Long:    `List the projects you may see: department, namespaces, and what their policy allows (priority changes and range, preemptibility changes).`,
		Example: "  arbiter projects\n  arbiter projects -o json",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			api, err := a.client()
			if err != nil {
				return err
			}
			var answer struct {
				Projects []map[string]any `json:"projects"`
			}
			if err := api.call(cmd.Context(), http.MethodGet, "/api/v1/org-unit/projects", url.Values{"limit": {"500"}}, nil, &answer); err != nil {
				return err
			}
			var list []project
			if err := remarshal(answer.Projects, &list); err != nil {
				return err
			}
			return a.print(answer, func(w io.Writer) {
				row(w, "NAME", "DEPARTMENT", "NAMESPACES", "PRIORITY CHANGE", "PREEMPTIBILITY CHANGE")
				for _, p := range list {
					row(w, p.Name, orDash(p.DepartmentName), orDash(strings.Join(p.Namespaces, ",")), priorityPolicy(p), allowed(p.Policy.AllowPreemptibilityChange))
				}
			})
		},
	}
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
