package web

import (
	"log/slog"

	"github.com/arbiterhq/arbiter/workloads"
	"github.com/labstack/echo/v4"
)

// The workload routes and pages decode, ask the workloads service (package workloads), and
// render. What the service stands on comes in Deps under the names below.

type (
	// WorkloadStore is what the workloads service needs of the workload records.
	WorkloadStore = workloads.Records
	// WorkloadLabeler labels a workload's top owner in the cluster (S9).
	WorkloadLabeler = workloads.Labeler
	// WorkloadSubmitter creates and controls submitted workloads in the cluster (kube.Workloads).
	WorkloadSubmitter = workloads.Cluster
	// SubmissionStore records submissions, stops and runs with their audit rows.
	SubmissionStore = workloads.Submissions
	// WorkloadForesight is the dry run (docs/scheduling.md "Dry run").
	WorkloadForesight = workloads.Foresight
	// PreemptibilityStandings are what a change of a running workload's preemptibility is
	// checked against (S14).
	PreemptibilityStandings = workloads.Standings
	// DryRunLimits bounds the dry runs running at once in the replica (docs/api.md "Dry runs").
	DryRunLimits = workloads.DryRunLimits
)

// DefaultDryRunsPerReplica and DefaultDryRunsPerCaller are the dry-run bounds when none is
// configured.
const (
	DefaultDryRunsPerReplica = workloads.DefaultDryRunsPerReplica
	DefaultDryRunsPerCaller  = workloads.DefaultDryRunsPerCaller
)

// NewDryRunLimits bounds dry runs to perReplica at once in the replica and perCaller per caller.
func NewDryRunLimits(perReplica, perCaller int) *DryRunLimits {
	return workloads.NewDryRunLimits(perReplica, perCaller)
}

// newWorkloadService is the one workloads service of a server, on Deps.
func newWorkloadService(d Deps, log *slog.Logger) *workloads.Service {
	return workloads.New(workloads.Deps{Records: d.Workloads, Configuration: d.Properties, Organization: d.Organization,
		Submissions: d.Submissions, Audit: d.Audit, Labeler: d.Labeler, Cluster: d.Submitter, Foresight: d.Foresee,
		Standings: d.Standings, DryRuns: d.DryRuns, Log: log})
}

// caller is who asks, as the workloads service takes it.
func caller(c echo.Context) workloads.Caller {
	return workloads.Caller{Identity: identity(c), Actor: actor(c)}
}

// setting is an optional JSON or form field as a change's setting.
func setting(o optional[string]) workloads.Setting { return workloads.Setting(o) }
