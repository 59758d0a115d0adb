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
		Long: `Describe one workload: its phase; its priority and preemptibility and where each came from
(a label or the pod's priority class, the project's, the type's, the category's or the
cluster's default, a clamp to the project's range, a label the project ignored; the last change
a person made and who); its place in the queue, the reason it waits and what would let it
start; its estimated start and what the estimate rests on; each preemption or reclaim, by whom
and under which rule; its pods; and its events, oldest first. Name it with -p PROJECT (and
-n NAMESPACE when the name is in several of the project's namespaces), or by its id.`,
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
	s.prioFrom, s.preemptFrom = origins(s)
	return a.print(map[string]any{"workload": raw, "events": evs.Events, "pods": pods.Pods},
		func(out io.Writer) { a.printStory(out, s) })
}

// origins says where the workload's priority and preemptibility came from, as the scheduler
// resolved them (the API's priorityFrom and preemptibilityFrom), with the last change a person
// made to each and who made it.
func origins(s story) (prio, preempt string) {
	prio, preempt = orUnresolved(s.w.PriorityFrom), orUnresolved(s.w.PreemptibilityFrom)
	var prioChange, preemptChange string
	for _, e := range s.events {
		switch e.Kind {
		case "PriorityChanged":
			prioChange = changedBy(e)
		case "PreemptibilityChanged":
			preemptChange = changedBy(e)
		}
	}
	return prio + prioChange, preempt + preemptChange
}

// changedBy is " (changed by alice at …)" for a change a person made, "" for the scheduler's.
func changedBy(e workloadEvent) string {
	if e.Actor == "" || e.Actor == "scheduler" {
		return ""
	}
	return " (changed by " + e.Actor + " at " + e.At.UTC().Format("2006-01-02 15:04:05Z") + ")"
}

func orUnresolved(from string) string {
	if from == "" {
		return "not resolved by the scheduler yet"
	}
	return from
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
	if w.NextStep != "" {
		field("Next step", w.NextStep)
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

// plural is "1 pod" or "n pods".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
