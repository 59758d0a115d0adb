package web

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/english"
	"github.com/arbiterhq/arbiter/scheduler"
)

// nextStepInput is what the next-step sentence of a waiting workload is made from: its record
// (phase, reason and the scheduler's message, S23), and the figures of the node pool the reason
// names and of its project in that pool (zero without a cluster: Live is false).
type nextStepInput struct {
	Phase, Reason, Message string
	Project                string
	Preemptible            bool
	RequestedGPUs          int
	QueuePosition          int

	Pool string // the node pool the reason is about; "" when it names none
	Live bool   // the pool and project figures below come from the scheduler's last cycle
	// The pool's allocatable and allocated GPUs.
	PoolGPUs, PoolAllocated int
	// The project's deserved quota and limit in Pool (Limit < 0: none), and what it uses there.
	Deserved, Limit                    int
	Allocated, AllocatedNonPreemptible int
}

// poolInMessage is the node pool a pending reason's message names ("... in pool a100 ...").
var poolInMessage = regexp.MustCompile(`in pool ([^\s,;:()]+)`)

// reasonPool reads the node pool out of a pending reason's message; "" when it names none.
func reasonPool(message string) string {
	m := poolInMessage.FindStringSubmatch(message)
	if m == nil {
		return ""
	}
	return strings.TrimSuffix(m[1], ".")
}

// holdInMessage is the sentence the scheduler adds to a waiting workload's message when
// something held back the evictions that would start it (S16, S27): what, and from when.
var holdInMessage = regexp.MustCompile("(" + regexp.QuoteMeta(scheduler.HeldByMinRuntimeUntil) + "|" +
	regexp.QuoteMeta(scheduler.HeldByReclaimRuntimeUntil) + "|" + regexp.QuoteMeta(scheduler.HeldByDelayUntil) + `)(\S+)\.$`)

// evictionHold reads what held back a waiting workload's evictions out of its message, and
// from when (as a page shows times); "" when nothing did.
func evictionHold(message string) (what, from string) {
	m := holdInMessage.FindStringSubmatch(message)
	if m == nil {
		return "", ""
	}
	at, err := time.Parse(time.RFC3339, m[2])
	if err != nil {
		return "", ""
	}
	return m[1], at.UTC().Format("Jan 2 15:04:05 UTC")
}

// nextStep says in plain words what a workload that does not run waits for and what would let
// it start (S23); "" for one that runs or has finished. It is pure: everything it says comes
// from in.
func nextStep(in nextStepInput) string {
	switch in.Phase {
	case "Running", "Completed", "Failed":
		return ""
	case "Suspended":
		if in.Reason == "" {
			return "Suspended: it keeps its place in the queue, and Arbiter resumes it once it is admitted again."
		}
	}
	project := "project " + in.Project
	needs := "Needs " + plural(in.RequestedGPUs, "GPU")
	if in.Pool != "" {
		needs += " in pool " + in.Pool
	}
	free := ""
	if in.Live && in.Pool != "" {
		free = fmt.Sprintf("; %d of the pool's %d are free", max(0, in.PoolGPUs-in.PoolAllocated), in.PoolGPUs)
	}
	ahead := ""
	if in.QueuePosition > 1 {
		ahead = fmt.Sprintf(" %s of %s %s ahead of it in the queue.", plural(in.QueuePosition-1, "workload"), project, isAre(in.QueuePosition-1))
	}
	switch in.Reason {
	case "NonPreemptibleOverQuota":
		s := needs + free
		if in.Live {
			s += fmt.Sprintf("; %s has used %d of its %d deserved GPUs for non-preemptible work, so a non-preemptible workload cannot start beyond them",
				project, in.AllocatedNonPreemptible, in.Deserved)
		} else {
			s += "; " + project + " has used its deserved GPUs for non-preemptible work, so a non-preemptible workload cannot start beyond them"
		}
		return s + ". Submit it as preemptible (it may then borrow idle GPUs), or wait for the project's other non-preemptible work to finish."
	case "OverLimit":
		s := needs + free
		if in.Live && in.Limit >= 0 {
			s += fmt.Sprintf("; %s uses %d of its limit of %d GPUs there, so it cannot start until its other workloads free %s",
				project, in.Allocated, in.Limit, plural(max(1, in.Allocated+in.RequestedGPUs-in.Limit), "GPU"))
		} else {
			s += "; " + project + " has reached its GPU limit there"
		}
		return s + ". Wait for them to finish, or ask an administrator to raise the limit."
	case "InsufficientCapacity":
		s := needs + free
		where := " in the pool"
		if in.Pool == "" {
			where = ""
		}
		switch what, from := evictionHold(in.Message); what {
		case scheduler.HeldByMinRuntimeUntil:
			return s + ". The lower-priority work of " + project + " it would preempt has not yet run the project's minimum runtime: it may preempt it from " +
				from + ", or start sooner if other work" + where + " finishes." + ahead
		case scheduler.HeldByReclaimRuntimeUntil:
			return s + ". The borrowed GPUs it would take back have not yet run their project's reclaim minimum runtime: it may reclaim them from " +
				from + ", or start sooner if other work" + where + " finishes." + ahead
		case scheduler.HeldByDelayUntil:
			return s + ". Project " + in.Project + "'s preemption delay lets it preempt or reclaim from " + from + "; it may start sooner if other work" +
				where + " finishes." + ahead
		}
		if in.Live && in.Allocated >= in.Deserved && in.Deserved >= 0 && in.Pool != "" {
			s += fmt.Sprintf("; %s already uses %d of its %d deserved GPUs, so it can only borrow idle ones", project, in.Allocated, in.Deserved)
		}
		return s + ". It starts when other work" + where + " finishes and frees them." + ahead
	case "GangIncomplete":
		return "Waits for its controller to create all the pods of its gang; it is placed only whole. " + in.Message
	case "WaitingForEvictions":
		return "Room has been made for it: the workloads preempted for it are releasing their GPUs, and it starts as soon as they are gone."
	case "BehindStrictHead":
		return in.Message + " The project queues strictly, so the first workload of its queue must start before any other."
	case "NoProject", "NoMatchingNodes":
		return in.Message
	case "":
		if in.Phase == "Preempted" {
			return "Preempted: it waits for its controller to bring its pods back, and is then queued at its original place."
		}
		return "Waits for the scheduler's next cycle to consider it."
	}
	if in.Message != "" {
		return in.Message
	}
	return "Waits: " + in.Reason + "."
}

var plural = english.Plural

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
