package cli

import (
	"github.com/spf13/cobra"
)

func (a *app) typesCommand() *cobra.Command {
	return listCommand(a, listing[workloadType]{
		use:     "types",
		short:   "List the workload types and the priority and preemptibility each gets by default",
		long:    `List the workload types: their API group, category, and the priority and preemptibility a workload of the type gets when it asks for none.`,
		example: "  arbiter types",
		path:    "/api/v1/workload-types", key: "types",
		header: []any{"NAME", "GROUP", "CATEGORY", "PRIORITY", "PREEMPTIBILITY"},
		row: func(t workloadType) []any {
			cat := "-"
			if t.CategoryName != nil {
				cat = *t.CategoryName
			}
			return []any{t.Name, orDash(t.Group), cat, orDash(t.EffectivePriorityName), orDash(t.EffectivePreemptibility)}
		},
	})
}
