package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

type listFlags struct {
	phase, submitter string
	all, finished    bool
	watch            bool
	interval         time.Duration
}

func (a *app) listCommand() *cobra.Command {
	var f listFlags
	c := &cobra.Command{
		Use:   "list",
		Short: "List workloads: phase, priority, queue position, GPUs",
		Long: `List the unfinished workloads you may see (--finished: the finished ones), in queue order,
with their phase, priority, preemptibility, queue position and GPUs. Filter by project (-p, or
$ARBITER_PROJECT, or the config file's; -A: every project you may see), phase (Arbiter's:
Pending, Running, Suspended, Preempted, Completed, Failed) and submitter. --watch lists again
every --interval until interrupted.`,
		Example: `  arbiter list -p team-a
  arbiter list -A --phase Pending
  arbiter list -p team-a --submitter alice -o json
  arbiter list -p team-a --watch`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !f.watch {
				return a.list(cmd.Context(), f)
			}
			if f.interval < time.Second {
				return usageError("--interval must be at least 1s, not %v", f.interval)
			}
			tick := time.NewTicker(f.interval)
			defer tick.Stop()
			for {
				if a.terminal(a.stdout) && a.output == "table" {
					fmt.Fprint(a.stdout, "\x1b[H\x1b[2J") // clear the screen
				}
				fmt.Fprintf(a.stdout, "Every %v: arbiter list   %s\n\n", f.interval, a.now().UTC().Format(time.RFC3339))
				if err := a.list(cmd.Context(), f); err != nil {
					if cmd.Context().Err() != nil {
						return nil // interrupted: the watch is over
					}
					return err
				}
				select {
				case <-cmd.Context().Done():
					return nil
				case <-tick.C:
				}
			}
		},
	}
	a.addProjectFlag(c)
	fl := c.Flags()
	fl.BoolVarP(&f.all, "all-projects", "A", false, "every project you may see")
	fl.StringVar(&f.phase, "phase", "", "only workloads in this phase (Pending, Running, Suspended, Preempted, Completed, Failed)")
	fl.StringVar(&f.submitter, "submitter", "", "only workloads this subject submitted")
	fl.BoolVar(&f.finished, "finished", false, "finished workloads instead of unfinished ones")
	fl.BoolVarP(&f.watch, "watch", "w", false, "list again every --interval until interrupted")
	fl.DurationVar(&f.interval, "interval", 2*time.Second, "how often --watch lists")
	return c
}

// maxListed bounds what list reads: ten pages of the API's largest.
const maxListed = 5000

func (a *app) list(ctx context.Context, f listFlags) error {
	api, err := a.client()
	if err != nil {
		return err
	}
	var filter []string
	if !f.all {
		proj := a.project()
		if proj == "" {
			return usageError("say which project: -p PROJECT (or $ARBITER_PROJECT), or -A for every project you may see")
		}
		filter = append(filter, "projectName=="+proj)
	}
	if f.phase != "" {
		filter = append(filter, "k8sPhase=="+f.phase)
	}
	if f.submitter != "" {
		filter = append(filter, "submitter=="+f.submitter)
	}
	var all []map[string]any
	for offset := 0; offset < maxListed; {
		q := url.Values{"limit": {"500"}, "offset": {strconv.Itoa(offset)}, "deleted": {strconv.FormatBool(f.finished)}}
		if len(filter) > 0 {
			q.Set("filterBy", strings.Join(filter, ","))
		}
		var page struct {
			Workloads []map[string]any `json:"workloads"`
			Next      *int             `json:"next"`
		}
		if err := api.call(ctx, http.MethodGet, "/api/v1/workloads", q, nil, &page); err != nil {
			return err
		}
		all = append(all, page.Workloads...)
		if page.Next == nil {
			break
		}
		offset = *page.Next
	}
	var typed []workload
	if err := remarshal(all, &typed); err != nil {
		return err
	}
	return a.print(map[string]any{"workloads": all}, func(w io.Writer) { a.workloadTable(w, typed, f.all) })
}

// workloadTable is list's table.
func (a *app) workloadTable(w io.Writer, list []workload, withProject bool) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No workloads.")
		return
	}
	head := []any{"NAME", "TYPE", "PHASE", "PRIORITY", "PREEMPTIBILITY", "GPUS", "QUEUE", "SUBMITTER", "AGE"}
	if withProject {
		head = append([]any{"PROJECT"}, head...)
	}
	row(w, head...)
	now := a.now()
	for _, x := range list {
		queue := "-"
		if x.QueuePosition != nil {
			queue = strconv.Itoa(*x.QueuePosition)
		}
		cells := []any{x.Name, x.Type, a.colour(phaseColour(x.Phase), x.Phase), x.PriorityName, x.Preemptibility,
			fmt.Sprintf("%d/%d", x.AllocatedGPUs, x.RequestedGPUs), queue, orDash(x.Submitter), age(now, x.CreatedAt)}
		if withProject {
			cells = append([]any{orDash(x.ProjectName)}, cells...)
		}
		row(w, cells...)
	}
}
