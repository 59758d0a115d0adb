package web

import (
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
)

// runAIWorkload are the Run:ai Workload fields of the record r (docs/api.md "Workloads" says
// how each is derived). RunningPods is 0 and ClusterID empty here: only the API's answers know
// the pods and the request's installation (workloadRecords.answer, submittedView).
func runAIWorkload(r store.WorkloadRecord, now time.Time) views.RunAIWorkload {
	source := "Other" // created in the cluster by something else than Arbiter
	if r.Submitter != "" {
		source = "Control-plane"
	}
	w := views.RunAIWorkload{
		RunAIPhase: store.RunAIPhase(r), PhaseMessage: r.Message, Priority: r.PriorityValue, PriorityClassName: r.PriorityName,
		TenantID: runAITenantID, DepartmentID: r.DepartmentID, Source: source, SubmittedBy: r.Submitter,
		UpdatedAt: r.UpdatedAt.UTC(), PhaseUpdatedAt: r.PhaseUpdatedAt.UTC(), K8sPhaseUpdatedAt: r.PhaseUpdatedAt.UTC(),
		CompletedAt: utc(r.FinishedAt), DeletedAt: utc(r.FinishedAt), Conditions: runAIConditions(r),
		CurrentNodePools: []string{}, DistributedFramework: store.DistributedFramework(r.Kind),
		TotalPendingTimeSeconds: store.TotalPendingSeconds(r, now), TotalRunningTimeSeconds: store.TotalRunningSeconds(r, now),
	}
	if r.NodePool != "" {
		w.CurrentNodePools = []string{r.NodePool}
	}
	return w
}

// runAIConditions are an unfinished workload's one condition, Admitted: True since it last
// started while it runs, else False with the reason and message it waits for (none when its
// owner stopped it). A finished workload has none.
func runAIConditions(r store.WorkloadRecord) []views.RunAICondition {
	if r.FinishedAt != nil {
		return []views.RunAICondition{}
	}
	if r.Phase == "Running" {
		return []views.RunAICondition{{Type: "Admitted", Status: "True", LastTransitionTime: utc(r.StartedAt)}}
	}
	since := r.PhaseUpdatedAt.UTC()
	return []views.RunAICondition{{Type: "Admitted", Status: "False", Reason: r.Reason, Message: r.Message, LastTransitionTime: &since}}
}

// runningPods counts the pods of the workload uid that the last cycle saw running on a node
// (status.phase Running, not being deleted); 0 without a cluster.
func runningPods(pods WorkloadPods, uid string) int {
	if pods == nil {
		return 0
	}
	ps, _ := pods.WorkloadPods(uid)
	n := 0
	for _, p := range ps {
		if p.K8sPhase == "Running" && p.Node != "" && p.Phase != "Terminating" {
			n++
		}
	}
	return n
}
