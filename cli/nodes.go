package cli

import (
	"io"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
)

func (a *app) nodesCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "nodes",
		Short:   "List the nodes: status, node pool, GPUs allocatable, allocated and free",
		Long:    `List the cluster's nodes as the scheduler's last cycle saw them: status, node pool, and their GPUs (allocatable, allocated by bound pods, free).`,
		Example: "  arbiter nodes\n  arbiter nodes -o yaml",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			api, err := a.client()
			if err != nil {
				return err
			}
			var answer struct {
				Nodes []map[string]any `json:"nodes"`
			}
			if err := api.call(cmd.Context(), http.MethodGet, "/api/v1/nodes", url.Values{"limit": {"500"}}, nil, &answer); err != nil {
				return err
			}
			var list []node
			if err := remarshal(answer.Nodes, &list); err != nil {
				return err
			}
			return a.print(answer, func(w io.Writer) {
				row(w, "NAME", "STATUS", "POOL", "GPUS", "ALLOCATED", "FREE")
				for _, n := range list {
					status := n.Status
					if n.Unschedulable {
						status += ",Unschedulable"
					}
					row(w, n.Name, status, orDash(n.NodePool), n.GPUs.Allocatable, n.GPUs.Allocated, n.GPUs.Free)
				}
			})
		},
	}
}
