package cli

import (
	"github.com/spf13/cobra"
)

func (a *app) prioritiesCommand() *cobra.Command {
	return listCommand(a, listing[priority]{
		use:     "priorities",
		short:   "List the priority dictionary: names and values",
		long:    `List the priorities --priority takes, by name, with their values (higher runs first and may preempt lower).`,
		example: "  arbiter priorities",
		path:    "/api/v1/workload-priorities", key: "priorities",
		header: []any{"NAME", "VALUE"},
		row:    func(p priority) []any { return []any{p.Name, p.Value} },
	})
}
