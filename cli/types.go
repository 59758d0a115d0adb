package cli

import (
	"io"
	"net/http"

	"github.com/spf13/cobra"
)

func (a *app) typesCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "types",
		Short:   "List the workload types and the priority and preemptibility each gets by default",
		Long:    `List the workload types: their API group, category, and the priority and preemptibility a workload of the type gets when it asks for none.`,
		Example: "  arbiter types",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			api, err := a.client()
			if err != nil {
				return err
			}
			var answer struct {
				Types []map[string]any `json:"types"`
			}
			if err := api.call(cmd.Context(), http.MethodGet, "/api/v1/workload-types", nil, nil, &answer); err != nil {
				return err
			}
			var list []workloadType
			if err := remarshal(answer.Types, &list); err != nil {
				return err
			}
			return a.print(answer, func(w io.Writer) {
				row(w, "NAME", "GROUP", "CATEGORY", "PRIORITY", "PREEMPTIBILITY")
				for _, t := range list {
					cat := "-"
					if t.CategoryName != nil {
						cat = *t.CategoryName
					}
					row(w, t.Name, orDash(t.Group), cat, orDash(t.EffectivePriorityName), orDash(t.EffectivePreemptibility))
				}
			})
		},
	}
}
