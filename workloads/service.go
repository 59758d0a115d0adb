// Package workloads is the application layer of workloads, between the HTTP handlers (the
// API's and the console's alike) and the store and the cluster: for a caller, which workloads
// they see (by project id), which they may act on (researchers on their own), the project
// policy (asked of the core, package scheduler), the labels that change a workload's priority
// and preemptibility, submitting, stopping, running and deleting, the dry run, and the audit
// rows and events of all of these. A handler decodes, calls the Service, renders.
//
// Its refusals are store errors (store.Error: a kind, a sentence, the field), which package
// web maps to HTTP statuses in its one place.
package workloads

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/native"
	"github.com/google/uuid"
)

// Records is what the service needs of the workload records.
type Records interface {
	VisibleWorkloads(ctx context.Context, q listquery.Query, includeFinished bool, scope store.WorkloadScope) ([]store.WorkloadRecord, *int, error)
	// VisibleWorkloadsAfter is a page of the same rows read by key (the CSV export's walk).
	VisibleWorkloadsAfter(ctx context.Context, q listquery.Query, includeFinished bool, scope store.WorkloadScope, after *store.WorkloadCursor, limit int) ([]store.WorkloadRecord, *store.WorkloadCursor, error)
	// CountVisibleWorkloads counts every page of VisibleWorkloads.
	CountVisibleWorkloads(ctx context.Context, q listquery.Query, includeFinished bool, scope store.WorkloadScope) (int, error)
	WorkloadRecord(ctx context.Context, uid string) (store.WorkloadRecord, error)
	WorkloadEvents(ctx context.Context, uid string) ([]store.WorkloadEvent, error)
	// FirstWorkloadEvents are a workload's first n events (a page of its history).
	FirstWorkloadEvents(ctx context.Context, uid string, n int) ([]store.WorkloadEvent, error)
	// WorkloadRecordsOf are the records of the workloads with these uids (the pods list's).
	WorkloadRecordsOf(ctx context.Context, uids []string) ([]store.WorkloadRecord, error)
	// CountWorkloads counts the records scope may see: by phase, pending ones by reason, and
	// preemptions and reclaims since a time (the Overview's tiles).
	CountWorkloads(ctx context.Context, scope store.WorkloadScope, since time.Time) (store.WorkloadCounts, error)
	ProjectRefs(ctx context.Context) ([]store.ProjectRef, error)
	Project(ctx context.Context, id uuid.UUID) (store.Project, error)
	AddWorkloadEvents(ctx context.Context, evs []store.WorkloadEvent, by store.Actor, changes map[string]store.Change, apply func(ctx context.Context) error) error
}

// Configuration is what the policy checks read: the priorities, categories and workload
// types (the core's Catalog is made of them).
type Configuration interface {
	Priorities(ctx context.Context, q listquery.Query) ([]store.Priority, error)
	Categories(ctx context.Context, q listquery.Query) ([]store.Category, error)
	WorkloadTypes(ctx context.Context, q listquery.Query, externalOnly bool) ([]store.WorkloadType, error)
}

// Organization is what a submission is resolved against: its project and the node pools.
type Organization interface {
	ProjectRefs(ctx context.Context) ([]store.ProjectRef, error)
	Project(ctx context.Context, id uuid.UUID) (store.Project, error)
	NodePools(ctx context.Context, q listquery.Query) ([]store.NodePool, error)
}

// Submissions records submissions: the new workload's record and audit row at once.
type Submissions interface {
	RecordSubmission(ctx context.Context, r store.WorkloadRecord, by store.Actor, changes map[string]any) error
	// RecordWorkloadAction records a person's stop or run of a workload: the event, its phase
	// and the audit row, with apply (the change in the cluster) in the same transaction.
	RecordWorkloadAction(ctx context.Context, ev store.WorkloadEvent, phase string, by store.Actor, action string, apply func(ctx context.Context) error) error
}

// Audit records audit rows written outside a change's own transaction.
type Audit interface {
	RecordAudit(ctx context.Context, e store.AuditEntry) error
}

// Labeler patches labels on a workload's top owner in the cluster (S9); a nil value removes
// the label. An error with a NotFound() bool method that answers true says the cluster has no
// such workload. kube.Workloads implements it.
type Labeler interface {
	PatchWorkloadLabels(ctx context.Context, uid string, set map[string]*string) error
}

// Cluster creates and controls submitted workloads in the cluster (kube.Workloads). Errors
// with an AlreadyExists() or Invalid() bool method answering true are the cluster refusing the
// objects for a reason the caller can act on; NotFound() says the workload is gone.
type Cluster interface {
	SubmitWorkload(ctx context.Context, w native.Workload) (native.Ref, time.Time, error)
	DeleteWorkload(ctx context.Context, r native.Ref) error
	SuspendJob(ctx context.Context, r native.Ref, suspend bool) error
	// DistributedMadeAs says what a distributed training submitted now is made as
	// (native.DistributedMadeAs), by whether the cluster serves PyTorchJobs.
	DistributedMadeAs(ctx context.Context) (native.MadeAs, error)
	// SubmittedObjects reads a workload's top owner back, for a clone.
	SubmittedObjects(ctx context.Context, r native.Ref) (native.Objects, error)
	// SchedulerName is the scheduler name Arbiter's pods carry.
	SchedulerName() string
	// SubmitManifest creates a Workloads V2 manifest's object as resource gvr in its
	// namespace; ManifestObject reads it back and DeleteManifest deletes it (NotFound()
	// when gone, or re-created under its name).
	SubmitManifest(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (native.Ref, time.Time, error)
	ManifestObject(ctx context.Context, gvr schema.GroupVersionResource, r native.Ref) (*unstructured.Unstructured, error)
	DeleteManifest(ctx context.Context, gvr schema.GroupVersionResource, r native.Ref) error
}

// Foresight is the dry run (docs/scheduling.md "Dry run"): what the next scheduling cycle
// would do with a workload submitted now. obj is the top owner the submission would create (a
// Job, Deployment or Pod with its namespace, labels and pod template); nothing is created,
// recorded or told. The server implements it with kube.Workloads.DryRun and the estimator's
// median runtimes.
type Foresight interface {
	DryRun(ctx context.Context, obj runtime.Object) (scheduler.Prediction, error)
}

// Standings tell, from the scheduler's last cycle, what a change of a running workload's
// preemptibility is checked against (scheduler.CheckPreemptibilityChange, S14): ok is false
// when the workload holds no GPUs there (a waiting workload is checked when it is admitted).
// department is the workload's department, by name.
type Standings interface {
	PreemptibilityStanding(uid, department string) (scheduler.PreemptibilityChange, bool)
}

// Deps are what the service stands on. Records may be nil (a server without workload
// records); the cluster's parts are nil without a cluster, and what needs them is refused
// with a sentence saying so.
type Deps struct {
	Records       Records
	Configuration Configuration
	Organization  Organization
	Submissions   Submissions
	Audit         Audit
	Labeler       Labeler
	Cluster       Cluster
	Foresight     Foresight
	Standings     Standings
	// DryRuns bounds the dry runs running at once; nil: the default bounds.
	DryRuns *DryRunLimits
	Log     *slog.Logger
}

// Service is the workloads' application layer; New builds it, once a server.
type Service struct {
	records   Records
	config    Configuration
	org       Organization
	subs      Submissions
	audit     Audit
	labeler   Labeler
	cluster   Cluster
	foresight Foresight
	standings Standings
	dryRuns   *DryRunLimits
	victims   *victimAudits
	log       *slog.Logger
}

// New builds the service on its dependencies.
func New(d Deps) *Service {
	s := &Service{records: d.Records, config: d.Configuration, org: d.Organization, subs: d.Submissions, audit: d.Audit,
		labeler: d.Labeler, cluster: d.Cluster, foresight: d.Foresight, standings: d.Standings, dryRuns: d.DryRuns,
		victims: newVictimAudits(), log: d.Log}
	if s.dryRuns == nil {
		s.dryRuns = NewDryRunLimits(DefaultDryRunsPerReplica, DefaultDryRunsPerCaller)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// Caller is who asks: their identity, which decides what they see and may do, and the actor
// that events and audit rows name (with the request it came in).
type Caller struct {
	Identity auth.Identity
	Actor    store.Actor
}

// HasRecords says whether the server keeps workload records (a test server may not).
func (s *Service) HasRecords() bool { return s.records != nil }

var (
	// ErrNoRecords answers workload routes of a server built without workload records.
	ErrNoRecords = store.Unavailable("workload records are not available on this server")
	// ErrNoClusterToLabel answers a change of labels on a server without a cluster.
	ErrNoClusterToLabel = store.Unavailable("no cluster is connected, so workload labels cannot be changed; start Arbiter with a kubeconfig")
	// ErrNoClusterToSubmit answers a submission, a stop, a run or a delete on a server
	// without a cluster.
	ErrNoClusterToSubmit = store.Unavailable("no cluster is connected, so workloads cannot be submitted; start Arbiter with a kubeconfig")
	// errNoClusterToForesee answers a dry run on a server without a cluster.
	errNoClusterToForesee = store.Unavailable("no cluster is connected, so there is no scheduler to ask what it would do; start Arbiter with a kubeconfig")
)
