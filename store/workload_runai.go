package store

import (
	"maps"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
)

// This file is what Run:ai's Workload has that Arbiter's record holds in other words: its phase
// (Run:ai's Phase enum), when the phase last changed, the department's id, the distributed
// framework and the pending and running times. Each has its SQL expression, which the list's
// filterBy and sortBy use, beside its Go twin, which the answers use; the two must agree
// (web's workload list test filters every fixture phase by the value it answers).

// runAIPhaseSQL is RunAIPhase in SQL.
const runAIPhaseSQL = `(CASE WHEN w.phase IN ('Pending', 'Running', 'Completed', 'Failed') THEN w.phase ` +
	`WHEN w.phase = 'Preempted' THEN CASE WHEN w.finished_at IS NULL THEN 'Pending' ELSE 'Failed' END ` +
	`WHEN w.phase = 'Suspended' THEN CASE WHEN w.queue_position > 0 OR w.reason <> '' THEN 'Pending' ELSE 'Stopped' END ` +
	`ELSE 'Unknown' END)`

// RunAIPhase is the record's phase in Run:ai's Phase enum. Pending, Running, Completed and
// Failed are the same words. A workload preempted and waiting to come back is Pending; one
// that ended preempted (nothing brings it back) Failed. A suspended Job that Arbiter holds until
// it is admitted (it has a reason or a queue position) is Pending; one its owner stopped,
// Stopped.
func RunAIPhase(r WorkloadRecord) string {
	switch r.Phase {
	case "Pending", "Running", "Completed", "Failed":
		return r.Phase
	case "Preempted":
		if r.FinishedAt == nil {
			return "Pending"
		}
		return "Failed"
	case "Suspended":
		if r.QueuePosition > 0 || r.Reason != "" {
			return "Pending"
		}
		return "Stopped"
	}
	return "Unknown"
}

// PhaseEventKinds are the kinds of workload event that change its phase (every kind but the
// changes of priority and preemptibility).
var PhaseEventKinds = []string{"Queued", "Admitted", "Preempted", "Reclaimed", "Suspended", "Resumed", "Completed", "Failed"}

// phaseUpdatedAtSQL is when the workload's phase last changed: its last phase event, else its
// queue time (a record written before its first event).
const phaseUpdatedAtSQL = `coalesce((SELECT max(e.at) FROM workload_events e WHERE e.workload_uid = w.uid AND e.kind IN ` +
	`('Queued', 'Admitted', 'Preempted', 'Reclaimed', 'Suspended', 'Resumed', 'Completed', 'Failed')), w.queued_at)`

// departmentIDSQL is the id of the department of the workload's project, as it is now; empty
// for a workload of no project, or whose project was deleted.
const departmentIDSQL = `coalesce((SELECT p.department_id::text FROM projects p WHERE p.id = w.project_id), '')`

// workloadColumns are what every read of whole records selects: the row, and what is derived
// from other tables (department_id, phase_updated_at).
const workloadColumns = `w.*, ` + departmentIDSQL + ` AS department_id, ` + phaseUpdatedAtSQL + ` AS phase_updated_at`

// distributedFrameworkSQL is DistributedFramework in SQL.
const distributedFrameworkSQL = `(CASE w.kind WHEN 'PyTorchJob' THEN 'PyTorch' WHEN 'TFJob' THEN 'TF' WHEN 'MPIJob' THEN 'MPI' ` +
	`WHEN 'XGBoostJob' THEN 'XGBoost' WHEN 'JAXJob' THEN 'JAX' ELSE '' END)`

// DistributedFramework is Run:ai's name of the framework of a distributed workload's kind
// (the Kubeflow trainer kinds); empty for any other kind.
func DistributedFramework(kind string) string {
	return map[string]string{"PyTorchJob": "PyTorch", "TFJob": "TF", "MPIJob": "MPI", "XGBoostJob": "XGBoost", "JAXJob": "JAX"}[kind]
}

// totalPendingSQL is TotalPendingSeconds in SQL.
const totalPendingSQL = `extract(epoch FROM coalesce(w.started_at, w.finished_at, now()) - w.queued_at)::bigint`

// TotalPendingSeconds are the seconds from the workload's queue time to its last start, or to
// its end or now when it has not started.
func TotalPendingSeconds(r WorkloadRecord, now time.Time) int64 {
	end := now
	switch {
	case r.StartedAt != nil:
		end = *r.StartedAt
	case r.FinishedAt != nil:
		end = *r.FinishedAt
	}
	return int64(end.Sub(r.QueuedAt) / time.Second)
}

// totalRunningSQL is TotalRunningSeconds in SQL.
const totalRunningSQL = `CASE WHEN w.started_at IS NULL THEN 0 ` +
	`ELSE greatest(0, extract(epoch FROM coalesce(w.finished_at, now()) - w.started_at))::bigint END`

// TotalRunningSeconds are the seconds since its last start, until it ended or now; 0 when it
// has not started.
func TotalRunningSeconds(r WorkloadRecord, now time.Time) int64 {
	if r.StartedAt == nil {
		return 0
	}
	end := now
	if r.FinishedAt != nil {
		end = *r.FinishedAt
	}
	return max(0, int64(end.Sub(*r.StartedAt)/time.Second))
}

// runAIWorkloadFields are the names of Run:ai's WorkloadsFilter and WorkloadsSort, as the
// workload list reads them. Run:ai's priority is the priority's value (Arbiter's name of it is
// priorityName, and priorityClassName as Run:ai spells it); deletedAt and completedAt are when
// the record finished. Arbiter measures no GPU idleness, gives no guaranteed runtime and has
// no AI applications: those are null, so a filter on them matches nothing and sorting by them
// keeps the default order.
var runAIWorkloadFields = map[string]listquery.Field{
	"clusterId":               {Kind: listquery.String, Column: "'" + runAIClusterID + "'::text", Sortable: true},
	"departmentId":            {Kind: listquery.String, Column: departmentIDSQL, Sortable: true},
	"deletedAt":               {Kind: listquery.Time, Column: "w.finished_at", Sortable: true, Nullable: true},
	"completedAt":             {Kind: listquery.Time, Column: "w.finished_at", Sortable: true, Nullable: true},
	"submittedBy":             {Kind: listquery.String, Column: "w.submitter", Sortable: true},
	"phase":                   {Kind: listquery.String, Column: runAIPhaseSQL, Sortable: true},
	"k8sPhase":                {Kind: listquery.String, Column: "w.phase", Sortable: true},
	"phaseUpdatedAt":          {Kind: listquery.Time, Column: phaseUpdatedAtSQL, Sortable: true},
	"nodepool":                {Kind: listquery.String, Column: "w.node_pool", Sortable: true},
	"distributedFramework":    {Kind: listquery.String, Column: distributedFrameworkSQL, Sortable: true},
	"allocatedGPU":            {Kind: listquery.Int, Column: "w.allocated_gpus", Sortable: true},
	"idleGpus":                {Kind: listquery.Int, Column: "NULL::int", Sortable: true, Nullable: true},
	"idleAllocatedGpus":       {Kind: listquery.Int, Column: "NULL::int", Sortable: true, Nullable: true},
	"totalPendingTimeSeconds": {Kind: listquery.Int, Column: totalPendingSQL, Sortable: true},
	"totalRunningTimeSeconds": {Kind: listquery.Int, Column: totalRunningSQL, Sortable: true},
	"priority":                {Kind: listquery.Int, Column: "w.priority_value", Sortable: true},
	"priorityClassName":       {Kind: listquery.String, Column: "w.priority_name", Sortable: true},
	"priorityName":            {Kind: listquery.String, Column: "w.priority_name", Sortable: true},
	"guaranteedRuntimeEndsAt": {Kind: listquery.Time, Column: "NULL::timestamptz", Sortable: true, Nullable: true},
	"aiApplicationId":         {Kind: listquery.String, Column: "NULL::text", Sortable: true, Nullable: true},
	"aiApplicationName":       {Kind: listquery.String, Column: "NULL::text", Sortable: true, Nullable: true},
	"finished":                {Kind: listquery.Bool, Column: "(w.finished_at IS NOT NULL)", Sortable: false},
}

// runAIClusterID is the installation's one cluster's id (web answers the same as clusterId).
var runAIClusterID = SeedID("cluster", "arbiter").String()

func init() { maps.Copy(WorkloadSpec.Fields, runAIWorkloadFields) }
