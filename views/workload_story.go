package views

import (
	"fmt"
	"time"
)

// WorkloadStoryPage is a workload's story (/workloads/{id}): what it is, what it waits for and
// what would let it start, its pods, its history, and why it was preempted.
type WorkloadStoryPage struct {
	Page
	W        Workload
	Age      string // since it was queued
	NextStep string // for a workload that does not run: what would let it start (S23)
	// PodsKnown: a cluster is connected (Pods is the scheduler's last view of them); PodsNote
	// says why there are none to show.
	PodsKnown bool
	PodsNote  string
	// PodsGrouping says which rule grouped the pods under this workload; "" when not known.
	PodsGrouping string
	// Topology says where its pods landed when it asks for a topology (S29).
	Topology []TopologyLanding
	Pods     []WorkloadPod
	Events   []StoryEvent
	Why      *PreemptionWhy // the last preemption or reclaim; nil when it was never preempted
	// LiveHref is this page's address while the workload has not finished: the page refreshes
	// itself from it every few seconds; "" once it has finished (nothing more will change).
	LiveHref string
	// Predicted is what the dry run at submission said it would evict; nil without one.
	Predicted *PredictedVictims
	Actions   WorkloadActions
}

// PredictedVictims are the workloads the dry run made at submission named as the ones the
// new workload would preempt (or reclaim from): a prediction, shown as such.
type PredictedVictims struct {
	Reclaim bool // the dry run's outcome was start-after-reclaim (else start-after-preemption)
	Victims []PredictedVictim
}

// PredictedVictim is one predicted victim: linked when the caller may open it, else named by
// its project only; Happened says it has since been preempted for this workload.
type PredictedVictim struct {
	Link     WorkloadLink
	Project  string
	Happened bool
}

// WorkloadActions are what the caller may do with the workload from its page: the buttons
// shown are those the API would allow them (the same check), and Done or Refused says how the
// last one went.
type WorkloadActions struct {
	Stop, Run, Delete bool
	// Clone opens the Submit page prefilled from the workload (a native type's, for a caller
	// who submits somewhere).
	Clone bool
	// Note says why stopping or running is not offered when deleting is (an inference, a
	// finished workload).
	Note    string
	Done    string // what the last action did, as a sentence
	Refused string // why the last action was refused, as a sentence
}

// WorkloadPod is one pod of a workload as the scheduler last saw it.
type WorkloadPod struct {
	Name  string
	Node  string // "" while pending
	Phase string // Pending, Bound, Terminating
	GPUs  int
	// What the API answers beside (Run:ai's Pod): the pod's and its workload's UIDs, its
	// PriorityClass, its creation and start, its status.phase and its containers.
	UID, WorkloadUID  string
	PriorityClassName string
	CreatedAt         time.Time
	StartedAt         *time.Time
	K8sPhase          string
	Containers        []PodContainer
}

// PodContainer is one of a pod's containers and its image.
type PodContainer struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// WorkloadLink names a workload another names (a preemptor); ID is empty when the caller may
// not open it (or Arbiter has no record of it), and the name is shown without a link.
type WorkloadLink struct {
	ID   string
	Name string // namespace/name
}

// StoryEvent is one entry of a workload's timeline.
type StoryEvent struct {
	At        time.Time
	Kind      string
	Rule      string // S16 or S17, for an eviction
	Message   string
	Actor     string
	Preemptor *WorkloadLink
}

// PreemptionWhy explains a workload's last preemption: by whom, under which rule, what its
// project borrowed at that moment (when recorded), and how to avoid it next time.
type PreemptionWhy struct {
	At        time.Time
	Kind      string // Preempted or Reclaimed
	Rule      string // S16 or S17
	RuleText  string
	Preemptor WorkloadLink
	Message   string
	Borrowed  *int
	Avoid     string
	Times     int // how often it was preempted in all
}

// StoryAge is a duration as people say it: "3d 4h", "2h 5m", "45s".
func StoryAge(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
	case d >= time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

func whyVerb(kind string) string {
	if kind == "Reclaimed" {
		return "reclaimed"
	}
	return "preempted"
}

// predictedKind is the event kind a predicted eviction is recorded as.
func predictedKind(reclaim bool) string {
	if reclaim {
		return "Reclaimed"
	}
	return "Preempted"
}
