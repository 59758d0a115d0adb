package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// act takes one of Run:ai's actions on the workload nameOrID names, through its native kind's
// route (suffix "/suspend", "/resume", or "" with DELETE).
func (a *app) act(ctx context.Context, nameOrID string, ref workloadRef, method, suffix, done string) error {
	w, err := a.resolve(ctx, nameOrID, ref)
	if err != nil {
		return err
	}
	kind := nativeKind(w.Type)
	if kind == "" {
		return refused("%s is a %s (%s), not one of Arbiter's native types; the command line stops, runs and deletes only those: use kubectl for it", w.Name, orDash(w.Type), w.Kind)
	}
	api, err := a.client()
	if err != nil {
		return err
	}
	if err := api.call(ctx, method, "/api/v1/workloads/"+kind+"/"+w.ID+suffix, nil, nil, nil); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "%s: %s (project %s, id %s).\n", done, w.Name, orDash(w.ProjectName), w.ID)
	return nil
}

// actionCommand is stop, run or delete.
func (a *app) actionCommand(use, short, long, example, method, suffix, done string) *cobra.Command {
	var ref workloadRef
	c := &cobra.Command{
		Use: use + " NAME|ID", Short: short, Long: long, Example: example,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, positional []string) error {
			return a.act(cmd.Context(), positional[0], ref, method, suffix, done)
		},
	}
	a.addWorkloadRefFlags(c, &ref)
	return c
}
