package cli

import (
	"net/url"

	"github.com/spf13/cobra"
)

func (a *app) nodesCommand() *cobra.Command {
	return listCommand(a, listing[node]{
		use:     "nodes",
		short:   "List the nodes: status, node pool, GPUs allocatable, allocated and free",
		long:    `List the cluster's nodes as the scheduler's last cycle saw them: status, node pool, and their GPUs (allocatable, allocated by bound pods, free).`,
		example: "  arbiter nodes\n  arbiter nodes -o yaml",
		path:    "/api/v1/nodes", query: url.Values{"limit": {"500"}}, key: "nodes",
		header: []any{"NAME", "STATUS", "POOL", "GPUS", "ALLOCATED", "FREE"},
		row: func(n node) []any {
			status := n.Status
			if n.Unschedulable {
				status += ",Unschedulable"
			}
			return []any{n.Name, status, orDash(n.NodePool), n.GPUs.Allocatable, n.GPUs.Allocated, n.GPUs.Free}
		},
	})
}
