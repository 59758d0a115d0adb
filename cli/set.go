package cli

import (
	"fmt"
	"io"
	"net/http"

	"github.com/spf13/cobra"
)

func (a *app) setCommand() *cobra.Command {
	var ref workloadRef
	var prio, preempt string
	var dryRun bool
	c := &cobra.Command{
		Use:   "set NAME|ID [--priority NAME] [--preemptibility VALUE]",
		Short: "Change a workload's priority or preemptibility",
		Long: `Change a workload's priority (a name of the dictionary: "arbiter priorities") or preemptibility
(preemptible, non-preemptible, semi-preemptible, or default to follow the type's default again).
The project's policy decides: a change it does not allow is refused with its rule, and the command
exits 1. Researchers may change the workloads they submitted; managers and admins any of their
projects'. --dry-run checks the change without making it.`,
		Example: `  arbiter set resnet -p team-a --priority high
  arbiter set resnet -p team-a --preemptibility non-preemptible --dry-run
  arbiter set resnet -p team-a --preemptibility default`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, positional []string) error {
			body := map[string]any{}
			if cmd.Flags().Changed("priority") {
				if prio == "" {
					return usageError("--priority needs a priority's name")
				}
				body["priority"] = prio
			}
			if cmd.Flags().Changed("preemptibility") {
				if preempt == "default" {
					body["preemptibility"] = nil
				} else {
					body["preemptibility"] = preempt
				}
			}
			if len(body) == 0 {
				return usageError("say what to change: --priority NAME and/or --preemptibility VALUE")
			}
			w, err := a.resolve(cmd.Context(), positional[0], ref)
			if err != nil {
				return err
			}
			api, err := a.client()
			if err != nil {
				return err
			}
			path := "/api/v1/workloads/" + w.ID
			if dryRun {
				path += "?dryRun=true"
			}
			var raw map[string]any
			if err := api.call(cmd.Context(), http.MethodPatch, path, nil, body, &raw); err != nil {
				return err
			}
			var after workload
			if err := remarshal(raw, &after); err != nil {
				return err
			}
			return a.print(raw, func(out io.Writer) {
				verb := "Changed"
				if dryRun {
					verb = "Dry run, nothing changed: would change"
				}
				fmt.Fprintf(out, "%s %s (project %s): priority %s, %s.\n", verb, after.Name, orDash(after.ProjectName), after.PriorityName, after.Preemptibility)
			})
		},
	}
	a.addWorkloadRefFlags(c, &ref)
	c.Flags().StringVar(&prio, "priority", "", "the new priority's name")
	c.Flags().StringVar(&preempt, "preemptibility", "", "preemptible, non-preemptible, semi-preemptible, or default")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "check the change without making it")
	return c
}
