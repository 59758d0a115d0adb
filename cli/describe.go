package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

func (a *app) describeCommand() *cobra.Command {
	var ref workloadRef
	c := &cobra.Command{
		Use:   "describe NAME|ID",
		Short: "Why a workload waits, when it starts, who preempted it: its whole story",
		Long: `Describe one workload: its phase; its priority and preemptibility and where each came from (a
change and who made it, the project's or the type's default, or the submission); its place in the
queue, the reason it waits and what would let it start; its estimated start and what the estimate
rests on; each preemption or reclaim, by whom and under which rule; its pods; and its events,
oldest first. Name it with -p PROJECT (and -n NAMESPACE when the name is in several of the
project's namespaces), or by its id.`,
		Example: `  arbiter describe resnet -p team-a
  arbiter describe 0e1c3a52-7d8e-4f0b-9a51-2b3c4d5e6f70
  arbiter describe resnet -p team-a -o yaml`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, positional []string) error {
			return a.describe(cmd.Context(), positional[0], ref)
		},
	}
	a.addWorkloadRefFlags(c, &ref)
	return c
}

// story is what describe gathers about a workload.
type story struct {
	w           workload
	events      []workloadEvent
	pods        []pod
	prioFrom    string
	preemptFrom string
	preemptors  map[string]string // id: namespace/name
}

func (a *app) describe(ctx context.Context, nameOrID string, ref workloadRef) error {
	w, err := a.resolve(ctx, nameOrID, ref)
	if err != nil {
		return err
	}
	api, err := a.client()
	if err != nil {
		return err
	}
	var raw map[string]any
	if err := api.call(ctx, http.MethodGet, "/api/v1/workloads/"+w.ID, nil, nil, &raw); err != nil {
		return err
	}
	var evs struct {
		Events []map[string]any `json:"events"`
	}
	if err := api.call(ctx, http.MethodGet, "/api/v1/workloads/"+w.ID+"/events", nil, nil, &evs); err != nil {
		return err
	}
	var pods struct {
		Pods []map[string]any `json:"pods"`
	}
	if err := api.call(ctx, http.MethodGet, "/api/v1/workloads/"+w.ID+"/pods", nil, nil, &pods); err != nil {
		return err
	}
	s := story{preemptors: map[string]string{}}
	if err := remarshal(raw, &s.w); err != nil {
		return err
	}
	if err := remarshal(evs.Events, &s.events); err != nil {
		return err
	}
	if err := remarshal(pods.Pods, &s.pods); err != nil {
		return err
	}
	for _, e := range s.events {
		if e.PreemptorID == "" || s.preemptors[e.PreemptorID] != "" {
			continue
		}
		var p workload
		if api.call(ctx, http.MethodGet, "/api/v1/workloads/"+e.PreemptorID, nil, nil, &p) == nil {
			s.preemptors[e.PreemptorID] = p.Namespace + "/" + p.Name
		}
	}
	s.prioFrom, s.preemptFrom = a.origins(ctx, s)
	return a.print(map[string]any{"workload": raw, "events": evs.Events, "pods": pods.Pods},
		func(out io.Writer) { a.printStory(out, s) })
}

// origins says where the workload's priority and preemptibility came from: the last change of
// each (by whom), else the project's or the type's default when the value is that, else the
// submission. What is not readable (a type or project hidden from the caller) is left out.
func (a *app) origins(ctx context.Context, s story) (prio, preempt string) {
	for _, e := range s.events {
		switch e.Kind {
		case "PriorityChanged":
			prio = "changed by " + orDash(e.Actor) + " at " + e.At.UTC().Format("2006-01-02 15:04:05Z")
		case "PreemptibilityChanged":
			preempt = "changed by " + orDash(e.Actor) + " at " + e.At.UTC().Format("2006-01-02 15:04:05Z")
		}
	}
	api, _ := a.client()
	var types struct {
		Types []workloadType `json:"types"`
	}
	var typ *workloadType
	if api.call(ctx, http.MethodGet, "/api/v1/workload-types", nil, nil, &types) == nil {
		for i := range types.Types {
			if types.Types[i].Name == s.w.Type {
				typ = &types.Types[i]
			}
		}
	}
	projectDefault := ""
	if s.w.ProjectName != "" {
		if p, err := a.findProject(ctx, s.w.ProjectName); err == nil && p.Policy.DefaultPriorityID != nil {
			var prios struct {
				Priorities []priority `json:"priorities"`
			}
			if api.call(ctx, http.MethodGet, "/api/v1/workload-priorities", nil, nil, &prios) == nil {
				for _, x := range prios.Priorities {
					if x.ID == *p.Policy.DefaultPriorityID {
						projectDefault = x.Name
					}
				}
			}
		}
	}
	if prio == "" {
		switch {
		case projectDefault != "" && projectDefault == s.w.PriorityName:
			prio = "the default of project " + s.w.ProjectName
		case projectDefault == "" && typ != nil && typ.EffectivePriorityName == s.w.PriorityName:
			prio = "the default of type " + s.w.Type
		default:
			prio = "given at submission"
		}
	}
	if preempt == "" {
		if typ != nil && typ.EffectivePreemptibility == s.w.Preemptibility {
			preempt = "the default of type " + s.w.Type
		} else {
			preempt = "given at submission"
		}
	}
	return prio, preempt
}

func (a *app) printStory(out io.Writer, s story) {
	w := s.w
	now := a.now()
	field := func(name string, value any) { row(out, name+":", value) }
	field("Name", w.Name)
	field("ID", w.ID)
	field("Project", fmt.Sprintf("%s (namespace %s)", orDash(w.ProjectName), w.Namespace))
	field("Type", fmt.Sprintf("%s (%s)", orDash(w.Type), w.Kind))
	field("Phase", a.colour(phaseColour(w.Phase), w.Phase))
	field("Priority", fmt.Sprintf("%s (%d): %s", w.PriorityName, w.PriorityValue, s.prioFrom))
	field("Preemptibility", fmt.Sprintf("%s: %s", w.Preemptibility, s.preemptFrom))
	field("Submitter", orDash(w.Submitter))
	field("GPUs", fmt.Sprintf("%d requested, %d allocated (a gang of %s)", w.RequestedGPUs, w.AllocatedGPUs, plural(w.Gang, "pod")))
	if w.NodePool != "" {
		field("Node pool", w.NodePool)
	}
	if len(w.Nodes) > 0 {
		field("Nodes", strings.Join(w.Nodes, ", "))
	}
	field("Queued", when(now, &w.CreatedAt))
	if w.StartedAt != nil {
		field("Started", when(now, w.StartedAt))
	}
	if w.FinishedAt != nil {
		field("Finished", when(now, w.FinishedAt))
	}
	if w.QueuePosition != nil {
		field("Queue position", strconv.Itoa(*w.QueuePosition))
	}
	if w.Reason != "" {
		field("Reason", w.Reason)
	}
	if w.Message != "" {
		field("Message", w.Message)
	}
	if next := nextStep(w); next != "" {
		field("Next step", next)
	}
	if w.EstimatedStartAt != nil || w.EstimateBasis != "" {
		field("Estimated start", when(now, w.EstimatedStartAt))
		field("Estimate basis", orDash(w.EstimateBasis))
	}
	field("Preemptions", strconv.Itoa(w.Preemptions))
	for _, e := range s.events {
		if e.Kind != "Preempted" && e.Kind != "Reclaimed" {
			continue
		}
		by := s.preemptors[e.PreemptorID]
		if by == "" {
			by = orDash(e.PreemptorID)
		} else {
			by += " (" + e.PreemptorID + ")"
		}
		line := fmt.Sprintf("%s at %s by %s: %s", e.Kind, e.At.UTC().Format("2006-01-02 15:04:05Z"), by, e.Message)
		if e.BorrowedGPUs != nil {
			line += fmt.Sprintf(" (its project used %d GPUs beyond its deserved quota)", *e.BorrowedGPUs)
		}
		row(out, "  "+line)
	}
	fmt.Fprintln(out)
	if len(s.pods) == 0 {
		fmt.Fprintln(out, "Pods: none in the scheduler's last cycle")
	} else {
		fmt.Fprintln(out, "Pods:")
		row(out, "  NAME", "PHASE", "NODE", "POOL", "GPUS")
		for _, p := range s.pods {
			n := "-"
			if p.NodeName != nil {
				n = *p.NodeName
			}
			row(out, "  "+p.Name, p.K8sPhase, n, orDash(p.NodePool), p.GPUs)
		}
	}
	fmt.Fprintln(out)
	if len(s.events) == 0 {
		fmt.Fprintln(out, "Events: none")
		return
	}
	fmt.Fprintln(out, "Events:")
	row(out, "  TIME", "KIND", "ACTOR", "MESSAGE")
	for _, e := range s.events {
		msg := e.Message
		if msg == "" {
			msg = e.Reason
		}
		row(out, "  "+e.At.UTC().Format("2006-01-02 15:04:05Z"), e.Kind, orDash(e.Actor), orDash(msg))
	}
}

// nextStep says what a waiting workload's owner can do, from its phase and reason; "" for
// one that runs or has finished.
func nextStep(w workload) string {
	switch {
	case w.Phase == "Suspended" && w.Reason == "":
		return "stopped by its owner: it starts only once run again (arbiter run " + w.Name + ")"
	case w.Phase == "Running" || w.Phase == "Completed" || w.Phase == "Failed":
		return ""
	}
	switch w.Reason {
	case "OverLimit":
		return "the project is at its GPU limit: wait for its other work to finish, ask for fewer GPUs, or ask an admin to raise the limit"
	case "NonPreemptibleOverQuota":
		return "make it preemptible (arbiter set " + w.Name + " --preemptibility preemptible) to run beyond the deserved quota, or wait for the project's non-preemptible work to finish"
	case "InsufficientCapacity":
		return "wait for GPUs to free up, ask for fewer GPUs, or raise its priority where the project's policy allows (arbiter set " + w.Name + " --priority NAME)"
	case "NoMatchingNodes":
		return "no node it may run on can hold it: check its node pools and GPUs per pod"
	case "GangIncomplete":
		return "not all of its pods exist yet: it starts once the whole gang is there"
	case "WaitingForEvictions":
		return "the workloads it preempts are leaving: it starts within seconds"
	case "BehindStrictHead":
		return "the project queues strictly: it starts after the workloads ahead of it"
	case "NoProject":
		return "its namespace belongs to no project: ask an admin to add the namespace to a project"
	case "":
		if w.QueuePosition != nil {
			return "it waits its turn in the queue"
		}
		return ""
	}
	return "see the reason's message above"
}

// plural is "1 pod" or "n pods".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
