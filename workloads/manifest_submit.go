package workloads

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/native"
)

// This file submits, reads and deletes workloads by their manifest (Run:ai's Workloads V2,
// docs/api.md "Workloads V2") with what the native submissions have: the caller's role at the
// project, the project's policy on priority and preemptibility, the submitter recorded, the
// audit row, and the dry run. What a manifest may hold is manifest_checks.go's.

// ManifestRequest is a decoded Workloads V2 submission: Run:ai's metadata and the manifest,
// as a JSON object or as base64 of YAML.
type ManifestRequest struct {
	Name                 string
	UseGivenNameAsPrefix bool
	ProjectID            string
	Priority             string // "": the type's default
	Preemptibility       string // "": the type's default
	Category             string // "": the type's
	Manifest             map[string]any
	ManifestBase64       string
}

// ManifestSubmission is a checked manifest: the object to create (labelled, in the project's
// namespace) with what it was resolved against.
type ManifestSubmission struct {
	Kind           ManifestKind
	Object         *unstructured.Unstructured
	RequestedName  string
	NamePrefix     bool
	Project        store.Project
	Type           store.WorkloadType
	Priority       store.Priority
	Preemptibility string
	bytes          int
}

// maxManifestName bounds a workload's name (a label value holds it: a Job's pods carry it), and
// maxManifestPrefix leaves room for the suffix "-xxxxx".
const (
	maxManifestName   = 63
	maxManifestPrefix = maxManifestName - 6
)

// PrepareManifest checks a Workloads V2 submission and resolves it against the project and
// the type of its kind. It changes nothing.
func (s *Service) PrepareManifest(ctx context.Context, who auth.Identity, req ManifestRequest) (ManifestSubmission, error) {
	if s.org == nil || s.subs == nil || s.config == nil {
		return ManifestSubmission{}, ErrNoRecords
	}
	if s.cluster == nil {
		return ManifestSubmission{}, ErrNoClusterToSubmit
	}
	if req.ProjectID == "" {
		return ManifestSubmission{}, store.InvalidField("metadata.projectId", "metadata.projectId is required: the id of the project to submit to (GET /api/v1/org-unit/projects)")
	}
	p, err := s.project(ctx, who, req.ProjectID)
	if err != nil {
		var se *store.Error
		if errors.As(err, &se) && se.Field == "projectId" {
			se.Field = "metadata.projectId"
		}
		return ManifestSubmission{}, err
	}
	u, field, err := DecodeManifest(req.Manifest, req.ManifestBase64)
	if err != nil {
		return ManifestSubmission{}, err
	}
	raw, _ := u.MarshalJSON()
	k, err := manifestKind(field, u)
	if err != nil {
		return ManifestSubmission{}, err
	}
	sub := ManifestSubmission{Kind: k, Object: u, Project: p, NamePrefix: req.UseGivenNameAsPrefix, bytes: len(raw)}
	if sub.RequestedName, err = manifestName(req, u); err != nil {
		return ManifestSubmission{}, err
	}
	schedulerName := s.cluster.SchedulerName()
	pods, err := checkManifest(field, u, p.Namespaces, schedulerName)
	if err != nil {
		return ManifestSubmission{}, err
	}
	if sub.Type, err = s.manifestType(ctx, k, req.Category); err != nil {
		return ManifestSubmission{}, err
	}
	priority, preemptibility, err := manifestPolicyAsks(field, u, req)
	if err != nil {
		return ManifestSubmission{}, err
	}
	resolved := Submission{Workload: native.Workload{Priority: priority, Preemptibility: preemptibility}, Project: p, Type: sub.Type}
	if err := s.resolvePolicyOf(ctx, &resolved, "metadata.priority", "metadata.preemptibility"); err != nil {
		return ManifestSubmission{}, err
	}
	sub.Priority, sub.Preemptibility = resolved.Priority, resolved.Preemptibility
	own := map[string]string{native.LabelWorkloadType: native.TypeSlug(sub.Type.Name)}
	if len(validation.IsValidLabelValue(p.Name)) == 0 {
		own[native.LabelProject] = p.Name
	}
	podLabels := maps.Clone(own)
	if priority != "" {
		own[native.LabelPriority] = priority
	}
	if preemptibility != "" {
		own[native.LabelPreemptibility] = preemptibility
	}
	if err := labelManifest(field, u, pods, own, podLabels, schedulerName); err != nil {
		return ManifestSubmission{}, err
	}
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[native.AnnotationSubmitter] = SubmitterOf(who)
	u.SetAnnotations(annotations)
	u.SetNamespace(cmp.Or(u.GetNamespace(), p.Namespaces[0]))
	u.SetName(sub.RequestedName)
	return sub, nil
}

// manifestName is the workload's name: Run:ai's metadata.name, else the manifest's own (the
// workload's name is what the request says, whatever the manifest calls the object).
func manifestName(req ManifestRequest, u *unstructured.Unstructured) (string, error) {
	name := cmp.Or(req.Name, u.GetName())
	if name == "" {
		return "", store.InvalidField("metadata.name", "metadata.name is required: a lower-case DNS label such as %q", "train-resnet")
	}
	limit := maxManifestName
	if req.UseGivenNameAsPrefix {
		limit = maxManifestPrefix
	}
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 || len(name) > limit {
		return "", store.InvalidField("metadata.name", "metadata.name %q is not valid: use at most %d lower-case letters, digits and '-', starting with a letter and ending with a letter or digit", name, limit)
	}
	return name, nil
}

// manifestType is the workload type the scheduler gives the kind (S4: by its kind and group;
// a kind with no row in the table is a type of its own name, which gets the defaults). A
// category asked for must be the type's.
func (s *Service) manifestType(ctx context.Context, k ManifestKind, category string) (store.WorkloadType, error) {
	types, err := s.config.WorkloadTypes(ctx, listquery.Query{}, false)
	if err != nil {
		return store.WorkloadType{}, err
	}
	t := store.WorkloadType{Name: k.Kind, Group: k.Group}
	if i := slices.IndexFunc(types, func(t store.WorkloadType) bool { return t.Name == k.Kind && t.Group == k.Group }); i >= 0 {
		t = types[i]
	}
	if have := ptr.Deref(t.CategoryName, ""); category != "" && category != have {
		return t, store.InvalidField("metadata.category", "metadata.category %q: a %s's category is its workload type's, %q; leave category out", category, k.Kind, have)
	}
	return t, nil
}

// manifestPolicyAsks are the priority and preemptibility the submission asks for: in Run:ai's
// metadata, or as the labels the scheduler reads on the manifest (the same value if both).
func manifestPolicyAsks(field string, u *unstructured.Unstructured, req ManifestRequest) (priority, preemptibility string, err error) {
	labels := u.GetLabels()
	pick := func(asked, label, name string) (string, error) {
		have := labels[label]
		if asked != "" && have != "" && asked != have {
			return "", store.InvalidField(field+".metadata.labels", "%s.metadata.labels[%s] is %q but metadata.%s is %q; give it once", field, label, have, name, asked)
		}
		return cmp.Or(asked, have), nil
	}
	if priority, err = pick(req.Priority, native.LabelPriority, "priority"); err != nil {
		return "", "", err
	}
	if preemptibility, err = pick(req.Preemptibility, native.LabelPreemptibility, "preemptibility"); err != nil {
		return "", "", err
	}
	switch scheduler.Preemptibility(preemptibility) {
	case "", scheduler.Preemptible, scheduler.NonPreemptible, scheduler.SemiPreemptible:
	default:
		return "", "", store.InvalidField("metadata.preemptibility", "metadata.preemptibility %q is not one of preemptible, non-preemptible, semi-preemptible", preemptibility)
	}
	return priority, preemptibility, nil
}

// SubmitManifest creates the checked manifest's object in the cluster and records the workload
// with its audit row, as Submit does a native one.
func (s *Service) SubmitManifest(ctx context.Context, who Caller, sub ManifestSubmission) (store.WorkloadRecord, error) {
	if s.cluster == nil {
		return store.WorkloadRecord{}, ErrNoClusterToSubmit
	}
	var (
		ref     native.Ref
		created time.Time
		err     error
	)
	obj := sub.Object
	for attempt := 0; attempt < 3; attempt++ {
		obj = sub.Object.DeepCopy()
		if sub.NamePrefix {
			obj.SetName(sub.RequestedName + "-" + nameSuffix())
		}
		ref, created, err = s.cluster.SubmitManifest(ctx, sub.Kind.GVR(), obj)
		var exists interface{ AlreadyExists() bool }
		if err == nil || !sub.NamePrefix || !errors.As(err, &exists) || !exists.AlreadyExists() {
			break
		}
	}
	if err != nil {
		w := native.Workload{Name: obj.GetName(), Namespace: obj.GetNamespace()}
		return store.WorkloadRecord{}, s.submitError(who, w, sub.Project, err)
	}
	rec := store.WorkloadRecord{
		UID: ref.UID, Namespace: ref.Namespace, Name: ref.Name, Kind: sub.Kind.Kind, APIGroup: sub.Kind.Group,
		TypeName: sub.Type.Name, CategoryName: ptr.Deref(sub.Type.CategoryName, ""), ProjectID: &sub.Project.ID, ProjectName: sub.Project.Name,
		DepartmentName: sub.Project.DepartmentName, PriorityName: sub.Priority.Name, PriorityValue: sub.Priority.Value,
		Preemptibility: sub.Preemptibility, Phase: "Pending", QueuedAt: created, Submitter: SubmitterOf(who.Identity),
	}
	changes := map[string]any{"type": sub.Type.Name, "project": sub.Project.Name, "namespace": ref.Namespace,
		"apiVersion": sub.Kind.APIVersion(), "kind": sub.Kind.Kind, "manifestBytes": sub.bytes,
		"priority": sub.Priority.Name, "preemptibility": sub.Preemptibility}
	if err := s.subs.RecordSubmission(context.WithoutCancel(ctx), rec, who.Actor, changes); err != nil {
		s.log.Warn("submitted workload not recorded ahead of the scheduler", "request_id", who.Actor.RequestID, "workload", ref.UID, "err", err)
	}
	return rec, nil
}

// dryRunKinds are the manifest kinds the dry run foresees: those whose pods and their count
// the scheduler reads from the object itself.
var dryRunKinds = []string{"Pod", "Job", "Deployment", "ReplicaSet", "StatefulSet"}

// DryRunManifest foresees a checked manifest as DryRun does a native submission.
func (s *Service) DryRunManifest(ctx context.Context, who Caller, sub ManifestSubmission) (scheduler.Prediction, error) {
	if !slices.Contains(dryRunKinds, sub.Kind.Kind) {
		return scheduler.Prediction{}, store.InvalidField("dryRun", "a dry run foresees a Pod, Job, Deployment, ReplicaSet or StatefulSet; submit the %s without dryRun", sub.Kind.Kind)
	}
	return s.foresee(ctx, who, Submission{Project: sub.Project, RequestedName: sub.RequestedName}, sub.Object.DeepCopy())
}

// Manifested is a workload submitted through Arbiter whose top owner is a manifest kind,
// visible to the caller, with its object as the cluster has it now (nil when gone).
type Manifested struct {
	Visible
	Kind   ManifestKind
	Object *unstructured.Unstructured
}

// SubmittedManifest is the workload with the id for Workloads V2: one the caller may see,
// submitted through Arbiter (natively or by manifest), of a manifest kind.
func (s *Service) SubmittedManifest(ctx context.Context, who auth.Identity, id string, read bool) (Manifested, error) {
	w, err := s.Visible(ctx, who, id)
	if err != nil {
		return Manifested{Visible: w}, err
	}
	k, ok := ManifestKindOf(w.Record.APIGroup, w.Record.Kind)
	if !ok || w.Record.Submitter == "" {
		return Manifested{Visible: w}, store.NotFound("workload %s was not submitted through Arbiter, so Workloads V2 does not serve it; see GET /api/v1/workloads/%s", id, id)
	}
	m := Manifested{Visible: w, Kind: k}
	if read && s.cluster != nil {
		obj, err := s.cluster.ManifestObject(ctx, k.GVR(), refOf(w.Record))
		var nf interface{ NotFound() bool }
		switch {
		case errors.As(err, &nf) && nf.NotFound():
		case err != nil:
			s.log.Warn("submitted workload's object not read", "workload", id, "err", err)
			return m, store.Unavailable("the cluster did not answer for workload %s; try again shortly", id)
		default:
			m.Object = obj
		}
	}
	return m, nil
}

// DeleteManifest deletes a Workloads V2 workload: roles that edit any workload of its project
// may, a researcher only their own; the audit row is written once the cluster has taken it.
func (s *Service) DeleteManifest(ctx context.Context, who Caller, m Manifested) error {
	r := m.Record
	if err := mayActOn(who.Identity, r, m.Scope, "delete", "delete this workload"); err != nil {
		return err
	}
	if s.cluster == nil {
		return ErrNoClusterToSubmit
	}
	if err := s.clusterError(who, r, s.cluster.DeleteManifest(ctx, m.Kind.GVR(), refOf(r))); err != nil {
		return err
	}
	s.audited(ctx, who, "delete", r)
	return nil
}
