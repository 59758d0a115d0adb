package kube

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// WorkloadNotFoundError says the cluster has no workload with that UID (any more).
type WorkloadNotFoundError struct{ UID string }

func (e *WorkloadNotFoundError) Error() string {
	return "workload " + e.UID + " is not in the cluster"
}

// NotFound lets callers recognise the error without importing this package.
func (e *WorkloadNotFoundError) NotFound() bool { return true }

// UnwatchedKindError says a workload's top owner is of a kind Arbiter does not watch (S5's
// fallback): Arbiter knows it only from its pods' references and cannot patch its labels.
type UnwatchedKindError struct{ Namespace, Name, Kind, Group string }

func (e *UnwatchedKindError) Error() string {
	return fmt.Sprintf("workload %s/%s is a %s.%s, a kind Arbiter does not watch: its labels cannot be changed here; "+
		"set priorityClassName and kai.scheduler/preemptibility on its pods instead (docs/kubernetes.md says how to make a kind known)",
		e.Namespace, e.Name, e.Kind, e.Group)
}

// Unwatched lets callers recognise the error without importing this package.
func (e *UnwatchedKindError) Unwatched() bool { return true }

// PatchWorkloadLabels sets labels on a workload's top owner (S9: priority and preemptibility
// are changed by labelling the top owner, never the pods' spec.priority); a nil value removes
// the label. uid is the top owner's UID; the patch carries it as a precondition, so an object
// re-created under the same name is not touched. An unknown or vanished workload is a
// *WorkloadNotFoundError.
func (k *Workloads) PatchWorkloadLabels(ctx context.Context, uid string, set map[string]*string) error {
	o, ok := k.workloadOwner(types.UID(uid))
	if !ok {
		return &WorkloadNotFoundError{UID: uid}
	}
	labels := make(map[string]any, len(set))
	for k, v := range set {
		if v == nil {
			labels[k] = nil // JSON null removes the label
		} else {
			labels[k] = *v
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": o.UID, "labels": labels}})
	if err != nil {
		return err
	}
	if o.Kind == "Pod" && o.APIVersion == "v1" {
		_, err = k.client.CoreV1().Pods(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	} else {
		gv, perr := schema.ParseGroupVersion(o.APIVersion)
		if perr != nil {
			return perr
		}
		resource, known := resourceOf(gv.Group, o.Kind)
		if !known {
			return &UnwatchedKindError{Namespace: o.Namespace, Name: o.Name, Kind: o.Kind, Group: gv.Group}
		}
		_, err = k.dynamic.Resource(gv.WithResource(resource)).Namespace(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	// NotFound: deleted since; Conflict: the UID precondition failed, the name now belongs to
	// another object.
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return &WorkloadNotFoundError{UID: uid}
	}
	return err
}

// workloadOwner finds a workload's top owner: a cached owner object, a bare pod, or else the
// owner the last cycle recorded (a kind Arbiter does not watch).
func (k *Workloads) workloadOwner(uid types.UID) (ownerRef, bool) {
	if o, ok := k.cache.workloadOwner(uid); ok {
		return o, true
	}
	if last := k.last.Load(); last != nil {
		if _, m := last.Workload(string(uid)); m != nil {
			return m.Owner, true
		}
	}
	return ownerRef{}, false
}

// workloadOwner returns the cached owner object or bare pod with that UID.
func (c *Cache) workloadOwner(uid types.UID) (ownerRef, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := c.owners[uid]; o != nil {
		return o.ref(), true
	}
	if e := c.pods[uid]; e != nil && e.controller == nil {
		return ownerRef{APIVersion: "v1", Kind: "Pod", Namespace: e.pod.Namespace, Name: e.pod.Name, UID: uid}, true
	}
	return ownerRef{}, false
}
