package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/workload/native"
)

// This file creates, deletes, stops and runs again the workloads people submit through
// Arbiter's submission API (web's submissions, docs/api.md "Submitting workloads"); what is
// created is built by the pure native.Workload.Objects.

// SubmitError is the cluster refusing a submission for a reason its sender can act on.
type SubmitError struct {
	Exists  bool // an object of that name is already in the namespace
	Message string
}

func (e *SubmitError) Error() string { return e.Message }

// AlreadyExists lets callers recognise a name taken without importing this package.
func (e *SubmitError) AlreadyExists() bool { return e.Exists }

// Invalid says the API server refused the objects as they are (admission, a quota).
func (e *SubmitError) Invalid() bool { return !e.Exists }

// SubmitWorkload creates a submitted workload's objects in its namespace: the top owner (a Job,
// a Deployment or a PyTorchJob, as w.As says) with this scheduler's name on its pods, then its Service, owned by the top
// owner so that deleting the workload deletes it. If the Service cannot be made the top owner
// is deleted again, so a retry starts clean. It returns the top owner as created.
func (k *Workloads) SubmitWorkload(ctx context.Context, w native.Workload) (native.Ref, time.Time, error) {
	w.SchedulerName = k.schedulerName
	o := w.Objects()
	var (
		meta metav1.ObjectMeta
		ref  metav1.OwnerReference
		err  error
	)
	switch {
	case o.Job != nil:
		job, cerr := k.client.BatchV1().Jobs(w.Namespace).Create(ctx, o.Job, metav1.CreateOptions{})
		if cerr == nil {
			meta = job.ObjectMeta
			ref = metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}
		}
		err = cerr
	case o.Deployment != nil:
		d, cerr := k.client.AppsV1().Deployments(w.Namespace).Create(ctx, o.Deployment, metav1.CreateOptions{})
		if cerr == nil {
			meta = d.ObjectMeta
			ref = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID}
		}
		err = cerr
	case o.PyTorchJob != nil:
		p, cerr := k.dynamic.Resource(pyTorchJobsResource).Namespace(w.Namespace).Create(ctx, o.PyTorchJob, metav1.CreateOptions{})
		if apierrors.IsNotFound(cerr) {
			// The CRD went away since discovery was asked (servedKindTTL).
			return native.Ref{}, time.Time{}, &SubmitError{Message: "the cluster no longer serves PyTorchJobs (Kubeflow training-operator's CRD); submit again to make an indexed Job instead"}
		}
		if cerr == nil {
			meta = metav1.ObjectMeta{Name: p.GetName(), Namespace: p.GetNamespace(), UID: p.GetUID(), CreationTimestamp: p.GetCreationTimestamp()}
			ref = metav1.OwnerReference{APIVersion: p.GetAPIVersion(), Kind: p.GetKind(), Name: p.GetName(), UID: p.GetUID()}
		}
		err = cerr
	default:
		return native.Ref{}, time.Time{}, fmt.Errorf("kube: workload %s builds no top owner", w.Name)
	}
	if err != nil {
		return native.Ref{}, time.Time{}, submitError(err, w.Namespace, w.Name)
	}
	r := native.Ref{UID: string(meta.UID), Namespace: meta.Namespace, Name: meta.Name, Object: ref.Kind}
	if o.Service != nil {
		o.Service.OwnerReferences = []metav1.OwnerReference{ref}
		if _, err := k.client.CoreV1().Services(w.Namespace).Create(ctx, o.Service, metav1.CreateOptions{}); err != nil {
			_ = k.DeleteWorkload(context.WithoutCancel(ctx), r)
			return native.Ref{}, time.Time{}, submitError(err, w.Namespace, w.Name)
		}
	}
	return r, meta.CreationTimestamp.Time, nil
}

func submitError(err error, namespace, name string) error {
	switch {
	case apierrors.IsAlreadyExists(err):
		return &SubmitError{Exists: true, Message: fmt.Sprintf("an object named %s already exists in namespace %s", name, namespace)}
	case apierrors.IsInvalid(err), apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota"):
		// An admission refusal or the namespace's ResourceQuota: the API server's sentence says
		// what to change. Any other Forbidden is Arbiter's own missing permission, an
		// operator's problem that the caller cannot act on.
		return &SubmitError{Message: "the cluster refused the workload: " + err.Error()}
	}
	return err
}

// DeleteWorkload deletes a workload's top owner (its pods and Service go with it, by their
// owner references); the UID precondition spares an object re-created under the same name.
// A workload already gone is a *WorkloadNotFoundError.
func (k *Workloads) DeleteWorkload(ctx context.Context, r native.Ref) error {
	uid := types.UID(r.UID)
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background}
	var err error
	switch r.Object {
	case "Job":
		err = k.client.BatchV1().Jobs(r.Namespace).Delete(ctx, r.Name, opts)
	case "Deployment":
		err = k.client.AppsV1().Deployments(r.Namespace).Delete(ctx, r.Name, opts)
	case "PyTorchJob":
		err = k.dynamic.Resource(pyTorchJobsResource).Namespace(r.Namespace).Delete(ctx, r.Name, opts)
	default:
		return fmt.Errorf("kube: Arbiter deletes only the Jobs, Deployments and PyTorchJobs it submits, not %s %s/%s", r.Object, r.Namespace, r.Name)
	}
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return &WorkloadNotFoundError{UID: r.UID}
	}
	return err
}

// SuspendJob stops (suspend) or runs again a submitted Job by spec.suspend, or a PyTorchJob by
// spec.runPolicy.suspend, Run:ai's STOP and RUN. Stopping also drops Arbiter's own suspended-by mark, so that a Job its owner stopped is
// not resumed by the scheduler (S20 resumes only what it suspended itself).
func (k *Workloads) SuspendJob(ctx context.Context, r native.Ref, suspend bool) error {
	if r.Object == "PyTorchJob" {
		return k.suspendPyTorchJob(ctx, r, suspend)
	}
	if r.Object != "Job" {
		return fmt.Errorf("kube: only Jobs are stopped and run again, not %s %s/%s", r.Object, r.Namespace, r.Name)
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": r.UID, "annotations": map[string]any{AnnotationSuspendedBy: nil}},
		"spec":     map[string]any{"suspend": suspend},
	})
	if err != nil {
		return err
	}
	_, err = k.client.BatchV1().Jobs(r.Namespace).Patch(ctx, r.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return &WorkloadNotFoundError{UID: r.UID}
	}
	return err
}

// SubmittedObjects reads a submitted workload's top owner back from the cluster, for a clone
// (native.RequestOf). A workload no longer there, or re-created under its name, is a
// *WorkloadNotFoundError.
func (k *Workloads) SubmittedObjects(ctx context.Context, r native.Ref) (native.Objects, error) {
	var (
		o   native.Objects
		uid types.UID
		err error
	)
	switch r.Object {
	case "Job":
		o.Job, err = k.client.BatchV1().Jobs(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if err == nil {
			uid = o.Job.UID
		}
	case "Deployment":
		o.Deployment, err = k.client.AppsV1().Deployments(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if err == nil {
			uid = o.Deployment.UID
		}
	case "PyTorchJob":
		o.PyTorchJob, err = k.ManifestObject(ctx, pyTorchJobsResource, r) // by list: the chart grants no get
		return o, err
	default:
		return o, fmt.Errorf("kube: Arbiter reads back only the Jobs, Deployments and PyTorchJobs it submits, not %s %s/%s", r.Object, r.Namespace, r.Name)
	}
	if apierrors.IsNotFound(err) || (err == nil && string(uid) != r.UID) {
		return native.Objects{}, &WorkloadNotFoundError{UID: r.UID}
	}
	return o, err
}
