package kube

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/workload/native"
)

// This file creates, reads back and deletes the workloads submitted by their manifest
// (Run:ai's Workloads V2, docs/api.md "Workloads V2"), through the dynamic client, of any kind
// the workloads service checked the manifest to be.

// SchedulerName is the scheduler name this scheduler binds the pods of.
func (k *Workloads) SchedulerName() string { return k.schedulerName }

// SubmitManifest creates obj, a checked manifest, as resource gvr in its namespace. The API
// server validates it strictly: a field it does not know (which the checks could not have
// seen) or one given twice refuses the object rather than being dropped.
func (k *Workloads) SubmitManifest(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (native.Ref, time.Time, error) {
	ns := obj.GetNamespace()
	created, err := k.dynamic.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	if apierrors.IsNotFound(err) {
		return native.Ref{}, time.Time{}, &SubmitError{Message: fmt.Sprintf("the cluster does not serve %s (%s); its operator is not installed, so it cannot be submitted here", obj.GetKind(), gvr.GroupResource())}
	}
	if err != nil {
		return native.Ref{}, time.Time{}, submitError(err, ns, obj.GetName())
	}
	r := native.Ref{UID: string(created.GetUID()), Namespace: created.GetNamespace(), Name: created.GetName(), Object: created.GetKind()}
	return r, created.GetCreationTimestamp().Time, nil
}

// ManifestObject reads a submitted workload's object back, without its managed fields. One no
// longer there, or re-created under its name, is a *WorkloadNotFoundError. It lists by the
// name's field selector rather than getting: the scheduler lists these kinds already, and the
// chart grants no get.
func (k *Workloads) ManifestObject(ctx context.Context, gvr schema.GroupVersionResource, r native.Ref) (*unstructured.Unstructured, error) {
	list, err := k.dynamic.Resource(gvr).Namespace(r.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", r.Name).String(), Limit: 1})
	if apierrors.IsNotFound(err) {
		return nil, &WorkloadNotFoundError{UID: r.UID}
	}
	if err != nil {
		return nil, err
	}
	if len(list.Items) == 0 || string(list.Items[0].GetUID()) != r.UID {
		return nil, &WorkloadNotFoundError{UID: r.UID}
	}
	obj := &list.Items[0]
	obj.SetManagedFields(nil)
	return obj, nil
}

// DeleteManifest deletes a submitted workload's object (what it made goes with it, by owner
// references); the UID precondition spares an object re-created under the same name.
func (k *Workloads) DeleteManifest(ctx context.Context, gvr schema.GroupVersionResource, r native.Ref) error {
	uid := types.UID(r.UID)
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background}
	err := k.dynamic.Resource(gvr).Namespace(r.Namespace).Delete(ctx, r.Name, opts)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return &WorkloadNotFoundError{UID: r.UID}
	}
	return err
}

// typedOwner is a manifest's object as the typed object the dry run reads, for the kinds it
// foresees; other objects are returned as they are.
func typedOwner(obj runtime.Object) (runtime.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	var typed runtime.Object
	switch gvk := u.GroupVersionKind(); gvk {
	case batchv1.SchemeGroupVersion.WithKind("Job"):
		typed = &batchv1.Job{}
	case appsv1.SchemeGroupVersion.WithKind("Deployment"):
		typed = &appsv1.Deployment{}
	case appsv1.SchemeGroupVersion.WithKind("ReplicaSet"):
		typed = &appsv1.ReplicaSet{}
	case appsv1.SchemeGroupVersion.WithKind("StatefulSet"):
		typed = &appsv1.StatefulSet{}
	case corev1.SchemeGroupVersion.WithKind("Pod"):
		typed = &corev1.Pod{}
	default:
		return nil, fmt.Errorf("kube: a dry run takes a Job, a Deployment, a ReplicaSet, a StatefulSet or a Pod, not %s", gvk)
	}
	if err := runtimeConverter.FromUnstructured(u.Object, typed); err != nil {
		return nil, err
	}
	return typed, nil
}
