package cli

import (
	"io"
	"net/http"

	"github.com/spf13/cobra"
)

func (a *app) prioritiesCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "priorities",
		Short:   "List the priority dictionary: names and values",
		Long:    `List the priorities --priority takes, by name, with their values (higher runs first and may preempt lower).`,
		Example: "  arbiter priorities",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			api, err := a.client()
			if err != nil {
				return err
			}
			var answer struct {
				Priorities []map[string]any `json:"priorities"`
			}
			if err := api.call(cmd.Context(), http.MethodGet, "/api/v1/workload-priorities", nil, nil, &answer); err != nil {
				return err
			}
			var list []priority
			if err := remarshal(answer.Priorities, &list); err != nil {
				return err
			}
			return a.print(answer, func(w io.Writer) {
				row(w, "NAME", "VALUE")
				for _, p := range list {
					row(w, p.Name, p.Value)
				}
			})
		},
	}
}
