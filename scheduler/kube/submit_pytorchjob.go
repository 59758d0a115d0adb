package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/workload/native"
)

// This file is the cluster's side of a distributed training made as training-operator's
// PyTorchJob: whether the cluster serves that CRD (asked of discovery, the answer kept a short
// while), and the PyTorchJob's creation, deletion and suspension through the dynamic client.

var pyTorchJobsResource = schema.GroupVersionResource{Group: native.PyTorchJobGroup, Version: native.PyTorchJobVersion, Resource: native.PyTorchJobResource}

// servedKindTTL is how long an answer of discovery is kept: a CRD installed or removed is seen
// by submissions within that time, and a burst of submissions asks discovery once.
const servedKindTTL = 30 * time.Second

// discoveryTimeout bounds one question to discovery.
const discoveryTimeout = 5 * time.Second

// servedKinds keeps discovery's last answer on whether the PyTorchJob CRD is served: one
// answer, so bounded, renewed after servedKindTTL.
type servedKinds struct {
	mu        sync.Mutex
	pyTorch   bool
	askedAt   time.Time
	askedOnce bool
	now       func() time.Time // nil: the wall clock
}

func (s *servedKinds) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// DistributedMadeAs says what a distributed training submitted now is made as
// (native.DistributedMadeAs): a PyTorchJob when the cluster serves training-operator's CRD.
func (k *Workloads) DistributedMadeAs(ctx context.Context) (native.MadeAs, error) {
	served, err := k.servesPyTorchJobs(ctx)
	if err != nil {
		return native.MadeAs{}, err
	}
	return native.DistributedMadeAs(served), nil
}

// servesPyTorchJobs asks discovery whether kubeflow.org/v1 has pytorchjobs, or answers what
// it said less than servedKindTTL ago.
func (k *Workloads) servesPyTorchJobs(ctx context.Context) (bool, error) {
	s := k.served
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.askedOnce && s.clock().Sub(s.askedAt) < servedKindTTL {
		return s.pyTorch, nil
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	raw, err := k.client.Discovery().RESTClient().Get().
		AbsPath("/apis", pyTorchJobsResource.Group, pyTorchJobsResource.Version).
		SetHeader("Accept", "application/json").Do(ctx).Raw()
	served := false
	switch {
	case apierrors.IsNotFound(err): // the group version is not served at all
	case err != nil:
		return false, fmt.Errorf("kube: asking discovery whether PyTorchJobs are served: %w", err)
	default:
		var list metav1.APIResourceList
		if err := json.Unmarshal(raw, &list); err != nil {
			return false, fmt.Errorf("kube: reading discovery's %s: %w", pyTorchJobsResource.GroupVersion(), err)
		}
		served = slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == pyTorchJobsResource.Resource })
	}
	s.pyTorch, s.askedAt, s.askedOnce = served, s.clock(), true
	return served, nil
}

// suspendPyTorchJob stops or runs again a submitted PyTorchJob by spec.runPolicy.suspend, as
// SuspendJob does a Job's spec.suspend.
func (k *Workloads) suspendPyTorchJob(ctx context.Context, r native.Ref, suspend bool) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": r.UID, "annotations": map[string]any{AnnotationSuspendedBy: nil}},
		"spec":     map[string]any{"runPolicy": map[string]any{"suspend": suspend}},
	})
	if err != nil {
		return err
	}
	_, err = k.dynamic.Resource(pyTorchJobsResource).Namespace(r.Namespace).Patch(ctx, r.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return &WorkloadNotFoundError{UID: r.UID}
	}
	return err
}
