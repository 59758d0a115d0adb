package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

// submitTypes are the native types submit takes, and their submission routes.
var submitTypes = map[string]string{"training": "trainings", "workspace": "workspaces", "distributed": "distributed", "inference": "inferences"}

type submitFlags struct {
	image, priority, preemptibility, namePrefix, cpuMemory string
	gpus, workers, servingPort                             int
	cpu                                                    float64
	nodePools, env                                         []string
	dryRun                                                 bool
}

func (a *app) submitCommand() *cobra.Command {
	var f submitFlags
	c := &cobra.Command{
		Use:   "submit TYPE NAME [flags] [-- COMMAND ARGS...]",
		Short: "Submit a training, workspace, distributed training or inference (or --dry-run: what would happen)",
		Long: `Submit a workload of one of Arbiter's native types to a project, with Run:ai's flag names:

  training      a Job of one pod that does not retry
  workspace     a Job of one pod that runs until stopped or deleted
  distributed   a PyTorchJob of a master and --workers workers where training-operator is
                installed, else an indexed Job of --workers pods; one gang
  inference     a Deployment and a Service on --serving-port

What follows -- is the container's command and its arguments. --priority and --preemptibility
are checked against the project's policy, and a refusal says which rule. --dry-run changes
nothing: it says whether the workload would start now and on which nodes, whom it would preempt
or reclaim GPUs from, or why it would wait and when it is expected to start.`,
		Example: `  # a training of 2 GPUs at high priority, first as a dry run
  arbiter submit training resnet -p team-a -i pytorch/pytorch:2.4 -g 2 --priority high --dry-run
  arbiter submit training resnet -p team-a -i pytorch/pytorch:2.4 -g 2 --priority high -- python train.py --epochs 10

  # a distributed training of 4 workers in node pool a100, with an environment variable
  arbiter submit distributed bert -p team-a -i nvcr.io/nvidia/pytorch:24.05 -g 1 --workers 4 --node-pools a100 -e NCCL_DEBUG=INFO -- torchrun train.py

  # an inference on port 8000, a name Arbiter completes
  arbiter submit inference --name-prefix llm -p team-a -i vllm/vllm-openai -g 1 --serving-port 8000`,
		Args: args(func(cmd *cobra.Command, positional []string) error {
			before := positional
			if n := cmd.ArgsLenAtDash(); n >= 0 {
				before = positional[:n]
			}
			if len(before) < 1 || len(before) > 2 {
				return fmt.Errorf("submit takes TYPE and NAME (or --name-prefix) before --, got %d arguments", len(before))
			}
			return nil
		}),
		ValidArgs: []string{"training", "workspace", "distributed", "inference"},
		RunE: func(cmd *cobra.Command, positional []string) error {
			command := []string(nil)
			if n := cmd.ArgsLenAtDash(); n >= 0 {
				positional, command = positional[:n], positional[n:]
			}
			return a.submit(cmd, f, positional, command)
		},
	}
	fl := c.Flags()
	a.addProjectFlag(c)
	fl.StringVarP(&f.image, "image", "i", "", "the container image (required)")
	fl.IntVarP(&f.gpus, "gpu-devices-request", "g", 0, "whole GPUs for each pod")
	fl.StringVar(&f.priority, "priority", "", "the priority's name (\"arbiter priorities\" lists them; default: the project's or the type's)")
	fl.StringVar(&f.preemptibility, "preemptibility", "", "preemptible, non-preemptible or semi-preemptible (default: the type's)")
	fl.IntVar(&f.workers, "workers", 0, "distributed: the number of workers (2 or more)")
	fl.StringSliceVar(&f.nodePools, "node-pools", nil, "node pools the pods may run in, in order (comma-separated or repeated)")
	fl.StringArrayVarP(&f.env, "environment", "e", nil, "an environment variable NAME=VALUE (repeatable)")
	fl.StringVar(&f.namePrefix, "name-prefix", "", "a prefix to which Arbiter adds a random suffix, instead of NAME")
	fl.IntVar(&f.servingPort, "serving-port", 0, "inference: the container port the Service serves")
	fl.Float64Var(&f.cpu, "cpu-core-request", 0, "CPU cores for each pod")
	fl.StringVar(&f.cpuMemory, "cpu-memory-request", "", "memory for each pod, a Kubernetes quantity such as 20G")
	fl.BoolVar(&f.dryRun, "dry-run", false, "submit nothing: say what would happen (start now on which nodes, whom it would preempt, or why it would wait)")
	return c
}

func (a *app) submit(cmd *cobra.Command, f submitFlags, positional, command []string) error {
	kind, ok := submitTypes[positional[0]]
	if !ok {
		return usageError("%s is not a type submit takes; use training, workspace, distributed or inference", positional[0])
	}
	name, prefix := "", false
	switch {
	case len(positional) == 2 && f.namePrefix != "":
		return usageError("give NAME or --name-prefix, not both")
	case len(positional) == 2:
		name = positional[1]
	case f.namePrefix != "":
		name, prefix = f.namePrefix, true
	default:
		return usageError("give the workload a NAME (or a --name-prefix)")
	}
	if f.image == "" {
		return usageError("say which image to run: -i IMAGE")
	}
	proj := a.project()
	if proj == "" {
		return usageError("say which project to submit to: -p PROJECT (or $ARBITER_PROJECT)")
	}
	spec := map[string]any{"image": f.image}
	if len(command) > 0 {
		spec["command"] = shellQuote(command[:1])
		if len(command) > 1 {
			spec["args"] = shellQuote(command[1:])
		}
	}
	compute := map[string]any{}
	if cmd.Flags().Changed("gpu-devices-request") {
		compute["gpuDevicesRequest"] = f.gpus
	}
	if f.cpu > 0 {
		compute["cpuCoreRequest"] = f.cpu
	}
	if f.cpuMemory != "" {
		compute["cpuMemoryRequest"] = f.cpuMemory
	}
	if len(compute) > 0 {
		spec["compute"] = compute
	}
	if f.priority != "" {
		spec["priorityClass"] = f.priority
	}
	if f.preemptibility != "" {
		spec["preemptibility"] = f.preemptibility
	}
	if len(f.nodePools) > 0 {
		spec["nodePools"] = f.nodePools
	}
	if cmd.Flags().Changed("workers") {
		spec["numWorkers"] = f.workers
	}
	if cmd.Flags().Changed("serving-port") {
		spec["servingPort"] = map[string]any{"container": f.servingPort}
	}
	if len(f.env) > 0 {
		vars := []map[string]string{}
		for _, e := range f.env {
			k, v, ok := strings.Cut(e, "=")
			if !ok || k == "" {
				return usageError("-e %s is not NAME=VALUE", e)
			}
			vars = append(vars, map[string]string{"name": k, "value": v})
		}
		spec["environmentVariables"] = vars
	}
	p, err := a.findProject(cmd.Context(), proj)
	if err != nil {
		return err
	}
	body := map[string]any{"name": name, "projectId": p.ID, "spec": spec}
	if prefix {
		body["useGivenNameAsPrefix"] = true
	}
	api, err := a.client()
	if err != nil {
		return err
	}
	if f.dryRun {
		var pr prediction
		var raw map[string]any
		q := url.Values{"dryRun": {"true"}}
		if err := api.call(cmd.Context(), http.MethodPost, "/api/v1/workloads/"+kind, q, body, &raw); err != nil {
			return err
		}
		if err := remarshal(raw, &pr); err != nil {
			return err
		}
		return a.print(raw, func(w io.Writer) { a.printPrediction(w, name, proj, pr) })
	}
	var raw map[string]any
	if err := api.call(cmd.Context(), http.MethodPost, "/api/v1/workloads/"+kind, nil, body, &raw); err != nil {
		return err
	}
	var w workload
	if err := remarshal(raw, &w); err != nil {
		return err
	}
	return a.print(raw, func(out io.Writer) {
		fmt.Fprintf(out, "Submitted %s %s to project %s (namespace %s), id %s: %s, priority %s, %s.\n",
			positional[0], w.Name, proj, w.Namespace, w.ID, w.Phase, w.PriorityName, w.Preemptibility)
		fmt.Fprintf(out, "Follow it with: arbiter describe %s -p %s\n", w.Name, proj)
	})
}

// printPrediction says what a dry run foresees, in sentences and a table of victims.
func (a *app) printPrediction(w io.Writer, name, proj string, p prediction) {
	pool := ""
	if p.NodePool != nil {
		pool = " in node pool " + *p.NodePool
	}
	on := ""
	if len(p.Nodes) > 0 {
		on = " on " + strings.Join(p.Nodes, ", ")
	}
	fmt.Fprintf(w, "Dry run: nothing was submitted. %s (priority %s, %s) in project %s ", name, p.Priority, p.Preemptibility, proj)
	switch p.Outcome {
	case "start-now":
		fmt.Fprintf(w, "would start now%s%s.\n", pool, on)
	case "start-after-preemption":
		fmt.Fprintf(w, "would start%s%s after preempting %d workload(s):\n", pool, on, len(p.Victims))
	case "start-after-reclaim":
		fmt.Fprintf(w, "would start%s%s after reclaiming GPUs from %d workload(s):\n", pool, on, len(p.Victims))
	default:
		reason := "it does not fit"
		if p.Reason != nil {
			reason = *p.Reason
		}
		fmt.Fprintf(w, "would wait: %s.\n", reason)
	}
	if len(p.Victims) > 0 {
		row(w, "  VICTIM", "NAMESPACE", "PROJECT", "PRIORITY", "GPUS", "RULE", "ID")
		for _, v := range p.Victims {
			row(w, "  "+v.Name, v.Namespace, v.Project, v.Priority, v.GPUs, v.Rule, v.WorkloadID)
		}
	}
	if p.Message != "" {
		fmt.Fprintf(w, "Why: %s\n", p.Message)
	}
	if p.QueuePosition != nil {
		fmt.Fprintf(w, "Queue position: %d\n", *p.QueuePosition)
	}
	fmt.Fprintf(w, "Estimated start: %s\n", when(a.now(), p.EstimatedStartAt))
	if p.EstimateBasis != "" {
		fmt.Fprintf(w, "Basis: %s\n", p.EstimateBasis)
	}
}

// shellQuote joins words into one string the API splits back as a shell would: each word that
// holds a space, a quote or a backslash is put in single quotes.
func shellQuote(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w != "" && !strings.ContainsAny(w, " \t\n'\"\\") {
			out[i] = w
			continue
		}
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
