package workloads

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/native"
	"github.com/google/uuid"
	"k8s.io/utils/ptr"
)

// This file submits workloads (docs/api.md "Submitting workloads"): a request of one of the
// four native kinds, checked and resolved against its project and the workload type's
// defaults (Prepare), then created in the cluster and recorded (Submit), or foreseen instead
// (DryRun, dry_run.go).

// Submission is a checked request: the workload to create with what it was resolved against.
type Submission struct {
	Workload       native.Workload
	RequestedName  string
	Project        store.Project
	Type           store.WorkloadType
	Priority       store.Priority // the requested one, else the type's default
	Preemptibility string         // the requested one, else the type's default
}

// Prepare checks a decoded request (the API's JSON or the Submit page's form) and resolves it
// against the project (the caller's role there, its namespace, its policy and node pools) and
// the workload type's defaults. It changes nothing.
func (s *Service) Prepare(ctx context.Context, who auth.Identity, k native.Kind, req native.Request) (Submission, error) {
	if s.org == nil || s.subs == nil || s.config == nil {
		return Submission{}, ErrNoRecords
	}
	w, err := ParseRequest(k, req)
	if err != nil {
		return Submission{}, err
	}
	p, err := s.project(ctx, who, req.ProjectID)
	if err != nil {
		return Submission{}, err
	}
	sub := Submission{Workload: w, RequestedName: req.Name, Project: p}
	if sub.Type, err = s.WorkloadType(ctx, k); err != nil {
		return Submission{}, err
	}
	if err := s.resolvePolicyOf(ctx, &sub, "spec.priorityClass", "spec.preemptibility"); err != nil {
		return Submission{}, err
	}
	if err := s.resolvePools(ctx, &sub); err != nil {
		return Submission{}, err
	}
	if err := s.resolveMadeAs(ctx, &sub.Workload); err != nil {
		return Submission{}, err
	}
	sub.Workload.Namespace, sub.Workload.Project, sub.Workload.Submitter = p.Namespaces[0], p.Name, SubmitterOf(who)
	return sub, nil
}

// ParseRequest checks a decoded request (native.Parse), its refusals naming the field.
func ParseRequest(k native.Kind, req native.Request) (native.Workload, error) {
	w, err := native.Parse(k, req)
	var fe *native.FieldError
	if errors.As(err, &fe) {
		return w, store.InvalidField(fe.Field, "%s", fe.Message)
	}
	return w, err
}

// project is the project a submission names, which the caller must be allowed to submit to. A
// project the caller may not see is answered as one that does not exist.
func (s *Service) project(ctx context.Context, who auth.Identity, projectID string) (store.Project, error) {
	id, err := uuid.Parse(projectID)
	if err != nil {
		return store.Project{}, store.InvalidField("projectId", "projectId %q is not a project id; use the id of a project from GET /api/v1/org-unit/projects", projectID)
	}
	p, err := s.org.Project(ctx, id)
	scope := auth.Project(p.ID.String(), p.DepartmentID.String())
	if errors.Is(err, store.ErrNotFound) || (err == nil && !auth.Allowed(who, auth.Read, scope)) {
		return store.Project{}, store.InvalidField("projectId", "project %s was not found; use the id of a project from GET /api/v1/org-unit/projects", projectID)
	}
	if err != nil {
		return store.Project{}, err
	}
	if err := authorize(who, auth.SubmitWorkload, scope, "submit workloads to project "+p.Name); err != nil {
		return store.Project{}, err
	}
	if len(p.Namespaces) == 0 {
		return store.Project{}, store.InvalidField("projectId", "project %s has no namespace, so its workloads have nowhere to run; ask an admin to give it one", p.Name)
	}
	return p, nil
}

// WorkloadType is the kind's row of the workload types table, with its defaults.
func (s *Service) WorkloadType(ctx context.Context, k native.Kind) (store.WorkloadType, error) {
	types, err := s.config.WorkloadTypes(ctx, listquery.Query{}, false)
	if err != nil {
		return store.WorkloadType{}, err
	}
	i := slices.IndexFunc(types, func(t store.WorkloadType) bool { return t.Name == k.Type })
	if i < 0 {
		return store.WorkloadType{}, store.Conflict("the workload type %q is not in the workload types table, so %s cannot be submitted", k.Type, k.Path)
	}
	return types[i], nil
}

// resolvePolicyOf applies the project's policy to the requested priority and preemptibility,
// with the checks of a change (S7, S8), both asked of the core on the scheduler's Catalog: a
// value other than the default is a change, which the policy may forbid or bound. A value the
// caller gave is kept as a label even when it equals today's default, so that it does not
// follow the default when that changes (S9); only absent values are left to the defaults.
// Refusals name priorityField or preemptibilityField, as the request spells them.
func (s *Service) resolvePolicyOf(ctx context.Context, sub *Submission, priorityField, preemptibilityField string) error {
	w := &sub.Workload
	catalog, err := s.Catalog(ctx, true)
	if err != nil {
		return err
	}
	project := store.ProjectPolicy(&sub.Project)
	def, defPreemptibility := catalog.PolicyDefaults(sub.Type.Name, sub.Type.Group, project.Policy)
	sub.Priority = storePriority(def)
	if w.Priority != "" {
		prio, refusal := catalog.CheckPriority(priorityField, w.Priority, project, def.Name)
		if refusal != nil {
			return policyRefusal(refusal)
		}
		sub.Priority = storePriority(prio)
	}
	if w.Preemptibility != "" {
		refusal := scheduler.CheckPreemptibility(preemptibilityField, scheduler.Preemptibility(w.Preemptibility), project, defPreemptibility)
		if refusal != nil {
			return policyRefusal(refusal)
		}
	}
	sub.Preemptibility = cmp.Or(w.Preemptibility, string(defPreemptibility))
	return nil
}

// resolveMadeAs decides what a distributed training is made as: a PyTorchJob when the cluster
// serves training-operator's CRD, else an indexed Job (also without a cluster, where nothing
// is made and a dry run foresees the Job).
func (s *Service) resolveMadeAs(ctx context.Context, w *native.Workload) error {
	if w.Kind != native.Distributed {
		return nil
	}
	w.As = native.AsIndexedJob
	if s.cluster == nil {
		return nil
	}
	as, err := s.cluster.DistributedMadeAs(ctx)
	if err != nil {
		s.log.Warn("whether the cluster serves PyTorchJobs is not known", "err", err)
		return store.Unavailable("the cluster did not say whether it runs Kubeflow training-operator, which decides what a distributed training is made as; try again shortly")
	}
	w.As = as
	return nil
}

// resolvePools checks the requested node pools against the project's and finds their node
// labels.
func (s *Service) resolvePools(ctx context.Context, sub *Submission) error {
	if len(sub.Workload.NodePools) == 0 {
		return nil
	}
	allowed := make([]string, 0, len(sub.Project.EffectiveNodePools))
	for _, r := range sub.Project.EffectiveNodePools {
		allowed = append(allowed, r.Name)
	}
	for _, name := range sub.Workload.NodePools {
		if !slices.Contains(allowed, name) {
			return store.InvalidField("spec.nodePools", "node pool %q is not one of project %s's node pools; use some of: %s", name, sub.Project.Name, strings.Join(allowed, ", "))
		}
	}
	pools, err := s.org.NodePools(ctx, listquery.Query{})
	if err != nil {
		return err
	}
	for _, name := range sub.Workload.NodePools {
		if i := slices.IndexFunc(pools, func(p store.NodePool) bool { return p.Name == name }); i >= 0 {
			sub.Workload.Pools = append(sub.Workload.Pools, native.Pool{Name: name, LabelKey: pools[i].LabelKey, LabelValue: pools[i].LabelValue})
		}
	}
	return nil
}

// Submit makes the checked submission's objects in the cluster and records the workload (so
// that the answer and the lists show it before the scheduler's first cycle), with its audit
// row.
func (s *Service) Submit(ctx context.Context, who Caller, sub Submission) (store.WorkloadRecord, error) {
	if s.cluster == nil {
		return store.WorkloadRecord{}, ErrNoClusterToSubmit
	}
	var (
		w       native.Workload
		ref     native.Ref
		created time.Time
		err     error
	)
	// A generated name may be taken; a few fresh suffixes make that vanishingly unlikely.
	for attempt := 0; attempt < 3; attempt++ {
		w = sub.Workload.Named(nameSuffix())
		ref, created, err = s.cluster.SubmitWorkload(ctx, w)
		var exists interface{ AlreadyExists() bool }
		if err == nil || !sub.Workload.NamePrefix || !errors.As(err, &exists) || !exists.AlreadyExists() {
			break
		}
	}
	if err != nil {
		return store.WorkloadRecord{}, s.submitError(who, w, sub.Project, err)
	}
	rec := store.WorkloadRecord{
		UID: ref.UID, Namespace: ref.Namespace, Name: ref.Name, Kind: ref.Object, APIGroup: APIGroupOf(ref.Object),
		TypeName: sub.Type.Name, CategoryName: ptr.Deref(sub.Type.CategoryName, ""), ProjectID: &sub.Project.ID, ProjectName: sub.Project.Name,
		DepartmentName: sub.Project.DepartmentName, PriorityName: sub.Priority.Name, PriorityValue: sub.Priority.Value,
		Preemptibility: sub.Preemptibility, Phase: "Pending", Gang: int(w.Pods()), RequestedGPUs: int(w.GPUs) * int(w.Pods()),
		QueuedAt: created, Submitter: w.Submitter,
		DepartmentID: sub.Project.DepartmentID.String(), PhaseUpdatedAt: created, // as a read of the record derives them
	}
	changes := map[string]any{"type": sub.Type.Name, "project": sub.Project.Name, "namespace": ref.Namespace, "image": w.Image,
		"gpusPerPod": w.GPUs, "pods": w.Pods(), "priority": sub.Priority.Name, "preemptibility": sub.Preemptibility}
	if w.Kind == native.Distributed {
		changes["madeAs"] = w.As.Object
	}
	// The workload exists now: a record that cannot be written is the scheduler's to write.
	if err := s.subs.RecordSubmission(context.WithoutCancel(ctx), rec, who.Actor, changes); err != nil {
		s.log.Warn("submitted workload not recorded ahead of the scheduler", "request_id", who.Actor.RequestID, "workload", ref.UID, "err", err)
	}
	return rec, nil
}

// submitError turns the cluster's refusal of a submission into the caller's.
func (s *Service) submitError(who Caller, w native.Workload, p store.Project, err error) error {
	var exists interface{ AlreadyExists() bool }
	if errors.As(err, &exists) && exists.AlreadyExists() {
		return store.ConflictField("name", "a workload named %s already exists in project %s (namespace %s); choose another name, or set useGivenNameAsPrefix to let Arbiter add a suffix", w.Name, p.Name, w.Namespace)
	}
	var invalid interface{ Invalid() bool }
	if errors.As(err, &invalid) && invalid.Invalid() {
		return store.Invalid("%s", err.Error())
	}
	s.log.Warn("workload not submitted", "request_id", who.Actor.RequestID, "workload", w.Namespace+"/"+w.Name, "err", err)
	return store.Unavailable("the cluster did not accept the workload; try again shortly (the request id in X-Request-Id helps an operator find why)")
}

// APIGroupOf is the API group of a top owner a native kind is made as.
func APIGroupOf(object string) string {
	switch object {
	case "Deployment":
		return "apps"
	case native.AsPyTorchJob.Object:
		return native.AsPyTorchJob.APIGroup
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

// SubmittableProjects are the projects the caller may submit to, by name.
func (s *Service) SubmittableProjects(ctx context.Context, who auth.Identity) ([]store.ProjectRef, error) {
	if s.org == nil {
		return nil, ErrNoRecords
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	refs, err := s.org.ProjectRefs(ctx)
	if err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(refs, func(p store.ProjectRef) bool {
		return !auth.Allowed(who, auth.SubmitWorkload, auth.Project(p.ID.String(), p.DepartmentID.String()))
	})
	slices.SortFunc(out, func(a, b store.ProjectRef) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// SubmitDefaults are what a submission gets without asking, for the Submit page's form: the
// priority dictionary (by value) to choose from, the priority and preemptibility the project's
// policy gives the workload type, and the project's node pools.
type SubmitDefaults struct {
	Priorities     []string
	Priority       string
	Preemptibility string
	Pools          []string
}

// SubmitDefaults are the defaults of a submission of kind k to the project with the id (one of
// SubmittableProjects; "", or one that no longer exists: none chosen yet, the type's defaults).
func (s *Service) SubmitDefaults(ctx context.Context, k native.Kind, projectID string) (SubmitDefaults, error) {
	var out SubmitDefaults
	if s.config == nil || s.org == nil {
		return out, ErrNoRecords
	}
	prios, err := s.config.Priorities(ctx, listquery.Query{SortBy: "value"})
	if err != nil {
		return out, err
	}
	for _, p := range prios {
		out.Priorities = append(out.Priorities, p.Name)
	}
	t, err := s.WorkloadType(ctx, k)
	if err != nil {
		return out, err
	}
	var chosen *store.Project // none yet: the type's defaults
	if id, err := uuid.Parse(projectID); err == nil {
		p, err := s.org.Project(ctx, id)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return out, err
		}
		if err == nil { // the project's default comes first, within its range (S7)
			chosen = &p
			for _, r := range p.EffectiveNodePools {
				out.Pools = append(out.Pools, r.Name)
			}
		}
	}
	def, defPreemptibility, err := s.PolicyDefaults(ctx, chosen, t)
	out.Priority, out.Preemptibility = def.Name, defPreemptibility
	return out, err
}

// PoolsOf are the node pools among names whose node label is one of wanted (a workload's
// objects as read back from the cluster, native.RequestOf), for a clone.
func (s *Service) PoolsOf(ctx context.Context, wanted []native.Pool, among []string) ([]string, error) {
	if s.org == nil {
		return nil, ErrNoRecords
	}
	all, err := s.org.NodePools(ctx, listquery.Query{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, want := range wanted {
		for _, p := range all {
			if p.LabelKey == want.LabelKey && p.LabelValue == want.LabelValue && slices.Contains(among, p.Name) {
				out = append(out, p.Name)
			}
		}
	}
	return out, nil
}
