package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

// This file is the dry run's Kubernetes side (docs/scheduling.md "Dry run"): the workload a submission would
// create is built from the objects it would create, as the cache builds a workload from its
// owner and pods, and foreseen on a snapshot of the cache taken now.

// ErrNotReady says the scheduler has no configuration yet, so it cannot foresee anything.
var ErrNotReady = errors.New("kube: the scheduler has not loaded its configuration yet")

// dryRunUID is the hypothetical workload's UID when its object has none (it was never created).
const dryRunUID = "arbiter-dry-run"

// DryRun says what the next cycle would do with obj, the top owner a submission would create
// (a *batchv1.Job, *appsv1.Deployment or *corev1.Pod, or an unstructured PyTorchJob, with its namespace, labels and pod
// template; or a manifest's object of those kinds, a ReplicaSet or a StatefulSet, unstructured), had it been created now. Nothing is created or recorded, and no event is
// written. The snapshot is the cache's as of now: what the informers have seen plus the binds
// Arbiter made and the API server has not confirmed yet (S22); evictions in flight are as the
// last cycle left them.
//
// When it would wait, its start is estimated (scheduler.ForeseeStart) with in's median
// runtimes: that costs a whole estimate pass, tens of cycles, so it runs only then.
func (k *Workloads) DryRun(ctx context.Context, obj runtime.Object, in scheduler.EstimateInput) (scheduler.Prediction, error) {
	if err := ctx.Err(); err != nil {
		return scheduler.Prediction{}, err
	}
	settings := k.settings.Load()
	if settings == nil {
		return scheduler.Prediction{}, ErrNotReady
	}
	now := time.Now()
	o, err := proposedOwner(obj, now)
	if err != nil {
		return scheduler.Prediction{}, err
	}
	// A replica that does not lead runs no cycle, so the cache may not have its settings yet.
	k.cache.SetSettings(settings)
	view := k.cache.Snapshot(now)
	w := k.cache.proposedWorkload(o, now)
	if other, _ := view.Workload(w.UID); other != nil {
		return scheduler.Prediction{}, fmt.Errorf("kube: workload %s already exists; a dry run is for one not created yet", w.UID)
	}
	p := view.Snapshot.Foresee(w)
	switch p.Outcome {
	case scheduler.StartNow:
		p.Start = scheduler.Estimate{At: now, Basis: "It fits on free capacity: it starts in the next cycle."}
	case scheduler.StartAfterPreemption, scheduler.StartAfterReclaim:
		p.Start = scheduler.Estimate{At: now, Basis: "It starts once the workloads evicted for it have terminated (their grace period)."}
	default:
		if err := ctx.Err(); err != nil {
			return p, err
		}
		p.Start = view.Snapshot.ForeseeStart(w, in)
	}
	return p, nil
}

// proposedOwner reads the owner a submission would create now: its identity, labels, gang
// (S5), deadline and the pods its template makes.
func proposedOwner(obj runtime.Object, now time.Time) (*owner, error) {
	var o *owner
	if u, ok := obj.(*unstructured.Unstructured); ok && u.GroupVersionKind() == pyTorchJobsResource.GroupVersion().WithKind("PyTorchJob") {
		// A distributed training made as a PyTorchJob: its gang and pods by its roles, as the
		// cache reads a suspended one (kinds.go).
		o = ownerFrom(u)
		o.Created = now
		return proposedIdentity(o)
	}
	obj, err := typedOwner(obj) // a manifest's object
	if err != nil {
		return nil, err
	}
	switch x := obj.(type) {
	case *batchv1.Job:
		if x.CreationTimestamp.IsZero() { // its deadline counts from its creation, now
			x = x.DeepCopy()
			x.CreationTimestamp = metav1.NewTime(now)
		}
		o = ownerFromJob(x) // its template and pod count too, as for a suspended Job
	case *appsv1.Deployment:
		o = ownerOf(x, "apps/v1", "Deployment")
		o.Template = &x.Spec.Template
		o.TemplateCount = 1
		if x.Spec.Replicas != nil {
			o.TemplateCount = *x.Spec.Replicas
		}
	case *appsv1.ReplicaSet:
		o = ownerOf(x, "apps/v1", "ReplicaSet")
		o.Template = &x.Spec.Template
		o.TemplateCount = ptrOr(x.Spec.Replicas, 1)
	case *appsv1.StatefulSet:
		o = ownerOf(x, "apps/v1", "StatefulSet")
		o.Template = &x.Spec.Template
		o.TemplateCount = ptrOr(x.Spec.Replicas, 1)
	case *corev1.Pod:
		o = ownerOf(x, "v1", "Pod")
		o.Template = &corev1.PodTemplateSpec{ObjectMeta: x.ObjectMeta, Spec: x.Spec}
		o.TemplateCount = 1
	default:
		return nil, fmt.Errorf("kube: a dry run takes a Job, a Deployment, a PyTorchJob or a Pod, not %T", obj)
	}
	return proposedIdentity(o)
}

// proposedIdentity checks the proposed owner's namespace and gives it the dry run's UID when
// it has none.
func proposedIdentity(o *owner) (*owner, error) {
	if o.Namespace == "" {
		return nil, errors.New("kube: a dry run needs the object's namespace")
	}
	if o.UID == "" {
		o.UID = types.UID(dryRunUID)
	}
	return o, nil
}

// proposedWorkload is the pending workload the owner's pods would make once all created,
// queued now (S10).
func (c *Cache) proposedWorkload(o *owner, now time.Time) scheduler.Workload {
	c.mu.RLock()
	defer c.mu.RUnlock()
	w := c.templateWorkload(o, scheduler.PhasePending, now)
	w.PrepareLookups()
	return w
}

// ptrOr is *p, or def when p is nil (a replicas field left to its default).
func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}
