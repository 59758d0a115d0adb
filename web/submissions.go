package web

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/workload/native"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// WorkloadSubmitter creates and controls submitted workloads in the cluster (kube.Scheduler).
// Errors with an AlreadyExists() or Invalid() bool method answering true are the cluster
// refusing the objects for a reason the caller can act on; NotFound() says the workload is gone.
type WorkloadSubmitter interface {
	SubmitWorkload(ctx context.Context, w native.Workload) (native.Ref, time.Time, error)
	DeleteWorkload(ctx context.Context, r native.Ref) error
	SuspendJob(ctx context.Context, r native.Ref, suspend bool) error
	// SubmittedObjects reads a workload's top owner back, for a clone.
	SubmittedObjects(ctx context.Context, r native.Ref) (native.Objects, error)
}

// SubmissionStore records submissions: the new workload's record and audit row at once.
type SubmissionStore interface {
	RecordSubmission(ctx context.Context, r store.WorkloadRecord, by store.Actor, changes map[string]any) error
	// RecordWorkloadAction records a person's stop or run of a workload: the event, its phase
	// and the audit row, with apply (the change in the cluster) in the same transaction.
	RecordWorkloadAction(ctx context.Context, ev store.WorkloadEvent, phase string, by store.Actor, action string, apply func(ctx context.Context) error) error
}

// submissions is the submission feature: Run:ai-shaped routes that create the four native kinds
// (POST /api/v1/workloads/workspaces, /trainings, /distributed, /inferences), read and delete
// them, and stop and run again those that can be (docs/api.md "Submitting workloads").
type submissions struct {
	workloads *workloads // records, visibility, the priority and policy checks of PATCH
	org       OrganizationStore
	props     WorkloadPropertiesStore
	store     SubmissionStore
	audit     AuditStore
	cluster   WorkloadSubmitter // nil: no cluster is connected
	foresight WorkloadForesight // the dry run; nil: no cluster is connected
	log       *slog.Logger
}

func (h *submissions) routes(r router) {
	for _, k := range native.Kinds {
		base := "/workloads/" + k.Path
		r.api.POST(base, h.submit(k))
		r.api.GET(base+"/:id", h.get(k))
		r.api.DELETE(base+"/:id", h.delete(k))
		r.api.POST(base+"/:id/suspend", h.suspend(k, true))
		r.api.POST(base+"/:id/resume", h.suspend(k, false))
	}
}

// submission is a checked request: the workload to create with what it was resolved against.
// A dry run stops here; creating it is h.create.
type submission struct {
	workload       native.Workload
	requestedName  string
	project        store.Project
	typ            store.WorkloadType
	priority       store.Priority // the requested one, else the type's default
	preemptibility string         // the requested one, else the type's default
}

func (h *submissions) submit(k native.Kind) echo.HandlerFunc {
	return func(c echo.Context) error {
		dry, err := boolParam(c, "dryRun")
		if err != nil {
			return err
		}
		target(c, map[bool]string{true: "dry-run", false: "create"}[dry], "workload", "")
		if !maySomewhere(identity(c), auth.SubmitWorkload) {
			if err := authorize(c, auth.SubmitWorkload, auth.System, "submit workloads"); err != nil {
				return err
			}
		}
		s, err := h.prepare(c, k)
		if err != nil {
			return err
		}
		if dry {
			p, err := h.foresee(c.Request().Context(), s)
			if err != nil {
				return err
			}
			return c.JSON(http.StatusOK, p)
		}
		return h.create(c, s)
	}
}

// prepare decodes and checks a submission, and resolves it against the project (the caller's
// role there, its namespace, its policy and node pools) and the workload type's defaults. It
// changes nothing.
func (h *submissions) prepare(c echo.Context, k native.Kind) (submission, error) {
	if h.org == nil || h.store == nil || h.props == nil {
		return submission{}, errNoWorkloadStore
	}
	var req native.Request
	if err := decodeJSON(c, &req, native.Accepted...); err != nil {
		return submission{}, err
	}
	return h.resolve(c, k, req)
}

// resolve checks a decoded request (the API's JSON or the Submit page's form) and resolves
// it as prepare says.
func (h *submissions) resolve(c echo.Context, k native.Kind, req native.Request) (submission, error) {
	if h.org == nil || h.store == nil || h.props == nil {
		return submission{}, errNoWorkloadStore
	}
	w, err := parseSubmission(k, req)
	if err != nil {
		return submission{}, err
	}
	ctx := c.Request().Context()
	p, err := h.project(c, req.ProjectID)
	if err != nil {
		return submission{}, err
	}
	s := submission{workload: w, requestedName: req.Name, project: p}
	if s.typ, err = h.workloadType(ctx, k); err != nil {
		return submission{}, err
	}
	if err := h.resolvePolicy(ctx, &s); err != nil {
		return submission{}, err
	}
	if err := h.resolvePools(ctx, &s); err != nil {
		return submission{}, err
	}
	s.workload.Namespace, s.workload.Project, s.workload.Submitter = p.Namespaces[0], p.Name, submitterOf(identity(c))
	return s, nil
}

// parseSubmission checks a decoded request (native.Parse), its refusals as the API's:
// a 400 naming the field.
func parseSubmission(k native.Kind, req native.Request) (native.Workload, error) {
	w, err := native.Parse(k, req)
	var fe *native.FieldError
	if errors.As(err, &fe) {
		return w, badField(fe.Field, "%s", fe.Message)
	}
	return w, err
}

// project is the project a submission names, which the caller must be allowed to submit to. A
// project the caller may not see is answered as one that does not exist.
func (h *submissions) project(c echo.Context, projectID string) (store.Project, error) {
	id, err := uuid.Parse(projectID)
	if err != nil {
		return store.Project{}, badField("projectId", "projectId %q is not a project id; use the id of a project from GET /api/v1/org-unit/projects", projectID)
	}
	p, err := h.org.Project(c.Request().Context(), id)
	scope := auth.Project(p.ID.String(), p.DepartmentID.String())
	if errors.Is(err, store.ErrNotFound) || (err == nil && !can(c, auth.Read, scope)) {
		return store.Project{}, badField("projectId", "project %s was not found; use the id of a project from GET /api/v1/org-unit/projects", projectID)
	}
	if err != nil {
		return store.Project{}, err
	}
	if err := authorize(c, auth.SubmitWorkload, scope, "submit workloads to project "+p.Name); err != nil {
		return store.Project{}, err
	}
	if len(p.Namespaces) == 0 {
		return store.Project{}, badField("projectId", "project %s has no namespace, so its workloads have nowhere to run; ask an admin to give it one", p.Name)
	}
	return p, nil
}

// workloadType is the kind's row of the workload types table, with its defaults.
func (h *submissions) workloadType(ctx context.Context, k native.Kind) (store.WorkloadType, error) {
	types, err := h.props.WorkloadTypes(ctx, listquery.Query{}, false)
	if err != nil {
		return store.WorkloadType{}, err
	}
	i := slices.IndexFunc(types, func(t store.WorkloadType) bool { return t.Name == k.Type })
	if i < 0 {
		return store.WorkloadType{}, store.Conflict("the workload type %q is not in the workload types table, so %s cannot be submitted", k.Type, k.Path)
	}
	return types[i], nil
}

// resolvePolicy applies the project's policy to the requested priority and preemptibility,
// with the checks of PATCH /api/v1/workloads/{id} (S7, S8): a value other than the default is
// a change, which the policy may forbid or bound. A value the caller gave is kept as a label
// even when it equals today's default, so that it does not follow the default when that
// changes (S9); only absent values are left to the defaults.
func (h *submissions) resolvePolicy(ctx context.Context, s *submission) error {
	w := &s.workload
	def, err := h.defaultPriority(ctx, s.project, s.typ)
	if err != nil {
		return err
	}
	if w.Priority != "" {
		prio, err := h.workloads.checkWorkloadPriority(ctx, "spec.priorityClass", optional[string]{Set: true, Value: w.Priority}, &s.project, def.Name)
		if status, msg := statusOf(err); err != nil && status == http.StatusBadRequest && fieldOf(err) == "" {
			return badField("spec.priorityClass", "%s", msg) // the policy's refusal concerns the priority asked for
		}
		if err != nil {
			return err
		}
		s.priority = prio
	} else {
		s.priority = def
	}
	if w.Preemptibility != "" {
		if err := preemptibilityRefused(&s.project, w.Preemptibility, s.typ.EffectivePreemptibility); err != nil {
			return badField("spec.preemptibility", "%s", err.Error())
		}
	}
	s.preemptibility = cmp.Or(w.Preemptibility, s.typ.EffectivePreemptibility)
	return nil
}

// defaultPriority is the priority a workload of the type gets in the project without asking
// for one, as the scheduler resolves it (S7 steps 4-7 and the clamp): the project's default
// priority, else the type's (or its category's, or the cluster's), within the project's range.
func (h *submissions) defaultPriority(ctx context.Context, p store.Project, t store.WorkloadType) (store.Priority, error) {
	dict, err := h.props.Priorities(ctx, listquery.Query{})
	if err != nil {
		return store.Priority{}, err
	}
	byName := func(name string) (store.Priority, bool) {
		i := slices.IndexFunc(dict, func(p store.Priority) bool { return p.Name == name })
		if i < 0 {
			return store.Priority{}, false
		}
		return dict[i], true
	}
	def := store.Priority{Name: t.EffectivePriorityName, Value: t.EffectivePriorityValue}
	if d, ok := byName(views.Deref(p.DefaultPriorityName)); ok {
		def = d
	}
	if lo, ok := byName(views.Deref(p.MinPriority)); ok && def.Value < lo.Value {
		def = lo
	}
	if hi, ok := byName(views.Deref(p.MaxPriority)); ok && def.Value > hi.Value {
		def = hi
	}
	return def, nil
}

// resolvePools checks the requested node pools against the project's and finds their node
// labels.
func (h *submissions) resolvePools(ctx context.Context, s *submission) error {
	if len(s.workload.NodePools) == 0 {
		return nil
	}
	allowed := mapSlice(s.project.EffectiveNodePools, func(r store.NodePoolRef) string { return r.Name })
	for _, name := range s.workload.NodePools {
		if !slices.Contains(allowed, name) {
			return badField("spec.nodePools", "node pool %q is not one of project %s's node pools; use some of: %s", name, s.project.Name, strings.Join(allowed, ", "))
		}
	}
	pools, err := h.org.NodePools(ctx, listquery.Query{})
	if err != nil {
		return err
	}
	for _, name := range s.workload.NodePools {
		if i := slices.IndexFunc(pools, func(p store.NodePool) bool { return p.Name == name }); i >= 0 {
			s.workload.Pools = append(s.workload.Pools, native.Pool{Name: name, LabelKey: pools[i].LabelKey, LabelValue: pools[i].LabelValue})
		}
	}
	return nil
}

// create makes the checked submission's objects in the cluster, records the workload (so the
// answer and the lists show it before the scheduler's first cycle) and answers 202.
func (h *submissions) create(c echo.Context, s submission) error {
	rec, err := h.createWorkload(c, s)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, submittedView(rec, s.requestedName))
}

// createWorkload makes and records the checked submission (the API's and the Submit page's).
func (h *submissions) createWorkload(c echo.Context, s submission) (store.WorkloadRecord, error) {
	if h.cluster == nil {
		return store.WorkloadRecord{}, errNoClusterToSubmit
	}
	ctx := c.Request().Context()
	var (
		w       native.Workload
		ref     native.Ref
		created time.Time
		err     error
	)
	// A generated name may be taken; a few fresh suffixes make that vanishingly unlikely.
	for attempt := 0; attempt < 3; attempt++ {
		w = s.workload.Named(nameSuffix())
		ref, created, err = h.cluster.SubmitWorkload(ctx, w)
		var exists interface{ AlreadyExists() bool }
		if err == nil || !s.workload.NamePrefix || !errors.As(err, &exists) || !exists.AlreadyExists() {
			break
		}
	}
	if err != nil {
		return store.WorkloadRecord{}, h.clusterError(c, w, s.project, err)
	}
	target(c, "create", "workload", ref.UID)
	rec := store.WorkloadRecord{
		UID: ref.UID, Namespace: ref.Namespace, Name: ref.Name, Kind: ref.Object, APIGroup: apiGroupOf(ref.Object),
		TypeName: s.typ.Name, CategoryName: views.Deref(s.typ.CategoryName), ProjectID: &s.project.ID, ProjectName: s.project.Name,
		DepartmentName: s.project.DepartmentName, PriorityName: s.priority.Name, PriorityValue: s.priority.Value,
		Preemptibility: s.preemptibility, Phase: "Pending", Gang: int(w.Pods()), RequestedGPUs: int(w.GPUs) * int(w.Pods()),
		QueuedAt: created, Submitter: w.Submitter,
	}
	changes := map[string]any{"type": s.typ.Name, "project": s.project.Name, "namespace": ref.Namespace, "image": w.Image,
		"gpusPerPod": w.GPUs, "pods": w.Pods(), "priority": s.priority.Name, "preemptibility": s.preemptibility}
	// The workload exists now: a record that cannot be written is the scheduler's to write.
	if err := h.store.RecordSubmission(context.WithoutCancel(ctx), rec, actor(c), changes); err != nil {
		h.log.Warn("submitted workload not recorded ahead of the scheduler", "request_id", requestID(c), "workload", ref.UID, "err", err)
	}
	return rec, nil
}

// errNoClusterToSubmit answers a submission on a server without a cluster.
var errNoClusterToSubmit = &httpError{status: http.StatusServiceUnavailable, message: "no cluster is connected, so workloads cannot be submitted; start Arbiter with a kubeconfig"}

// clusterError turns the cluster's refusal of a submission into the API's answer.
func (h *submissions) clusterError(c echo.Context, w native.Workload, p store.Project, err error) error {
	var exists interface{ AlreadyExists() bool }
	if errors.As(err, &exists) && exists.AlreadyExists() {
		return store.ConflictField("name", "a workload named %s already exists in project %s (namespace %s); choose another name, or set useGivenNameAsPrefix to let Arbiter add a suffix", w.Name, p.Name, w.Namespace)
	}
	var invalid interface{ Invalid() bool }
	if errors.As(err, &invalid) && invalid.Invalid() {
		return badRequest("%s", err.Error())
	}
	h.log.Warn("workload not submitted", "request_id", requestID(c), "workload", w.Namespace+"/"+w.Name, "err", err)
	return &httpError{status: http.StatusServiceUnavailable, message: "the cluster did not accept the workload; try again shortly (the request id in X-Request-Id helps an operator find why)"}
}

func apiGroupOf(object string) string {
	if object == "Deployment" {
		return "apps"
	}
	return "batch"
}

// nameSuffix is five random lower-case letters and digits, as Kubernetes' generateName adds.
func nameSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func newSubmissions(d Deps, log *slog.Logger) *submissions {
	return &submissions{
		workloads: &workloads{store: d.Workloads, priorities: d.Properties, log: log},
		org:       d.Organization, props: d.Properties, store: d.Submissions, audit: d.Audit, cluster: d.Submitter,
		foresight: d.Foresee, log: log,
	}
}
