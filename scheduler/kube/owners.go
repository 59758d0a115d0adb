package kube

// Owners that are not Jobs or pods (Deployments, Kubeflow's, Ray's, LeaderWorkerSets...) are
// watched with informers of their own, started for the kinds the API server serves and for
// kinds installed later.

import (
	"context"
	"errors"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// ownerFactories are the informer factories owners are watched with (see ownerWatch).
type ownerFactories struct {
	typed    informers.SharedInformerFactory
	metadata metadatainformer.SharedInformerFactory
	dynamic  dynamicinformer.DynamicSharedInformerFactory
}

// watchOwners starts informers for the owner kinds the API server serves (served: what
// discovery said at the start), and watches CustomResourceDefinitions so that kinds installed
// later (a Kubeflow operator, say) are watched from then on.
func (s *Scheduler) watchOwners(ctx context.Context, f ownerFactories, served func(schema.GroupVersionResource) bool) error {
	start := func(k ownerKind) {
		s.ownersMu.Lock()
		defer s.ownersMu.Unlock()
		if s.ownerWatched[k.GVR] {
			return
		}
		s.ownerWatched[k.GVR] = true
		apiVersion := k.GVR.GroupVersion().String()
		var reg cache.ResourceEventHandlerRegistration
		switch k.Watch {
		case watchJobs:
			reg, _ = f.typed.Batch().V1().Jobs().Informer().AddEventHandler(ownerEvents(s.cache, ownerFromJob))
			f.typed.Start(ctx.Done())
		case watchMetadata:
			reg, _ = f.metadata.ForResource(k.GVR).Informer().AddEventHandler(ownerEvents(s.cache, func(m *metav1.PartialObjectMetadata) *owner {
				return ownerOf(m, apiVersion, k.Kind)
			}))
			f.metadata.Start(ctx.Done())
		default:
			inf := f.dynamic.ForResource(k.GVR).Informer()
			_ = inf.SetTransform(dropManagedFields) // fails only once started, and each kind is started once
			reg, _ = inf.AddEventHandler(ownerEvents(s.cache, ownerFrom))
			f.dynamic.Start(ctx.Done())
		}
		if reg != nil {
			s.ownersSynced = append(s.ownersSynced, reg.HasSynced)
		}
	}
	for _, k := range watchedOwners {
		if served(k.GVR) {
			start(k)
		}
	}
	crds := f.metadata.ForResource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).Informer()
	_, err := crds.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.maybeWatchCRD(ctx, obj, start) },
		UpdateFunc: func(_, obj any) { s.maybeWatchCRD(ctx, obj, start) },
	})
	if err != nil {
		return err
	}
	f.metadata.Start(ctx.Done())
	return nil
}

// ownerEvents feeds an informer's objects of type T to the cache as owners.
func ownerEvents[T metav1.Object](c *Cache, convert func(T) *owner) cache.ResourceEventHandlerFuncs {
	upsert := func(obj any) {
		if t, ok := obj.(T); ok {
			c.UpsertOwner(convert(t))
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    upsert,
		UpdateFunc: func(_, obj any) { upsert(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := tombstone[T](obj); ok {
				c.DeleteOwner(t.GetUID())
			}
		},
	}
}

func (s *Scheduler) maybeWatchCRD(ctx context.Context, obj any, start func(ownerKind)) {
	crd, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	for _, k := range watchedOwners {
		// A CustomResourceDefinition is named <plural>.<group>.
		if crd.Name != k.GVR.Resource+"."+k.GVR.Group {
			continue
		}
		// The CRD may not be established yet; poll discovery briefly off the event goroutine.
		go func() {
			for i := 0; i < 50 && ctx.Err() == nil; i++ {
				if s.servesResource(k.GVR) {
					start(k)
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
	}
}

// servedAtStart asks discovery once for every resource the API server serves, and returns
// what it said: the start looks up about twenty kinds, and asked one group and version at a
// time, a request each, one after the other, they took 70–100 ms on a local API server busy
// with the first lists, and would take a round trip each to a remote one. A group whose
// discovery failed is asked again on its own (servesResource).
func (s *Scheduler) servedAtStart() func(schema.GroupVersionResource) bool {
	_, lists, err := s.client.Discovery().ServerGroupsAndResources()
	served := map[schema.GroupVersionResource]bool{}
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			served[gv.WithResource(r.Name)] = true
		}
	}
	var failed map[schema.GroupVersion]error
	if groups := (*discovery.ErrGroupDiscoveryFailed)(nil); errors.As(err, &groups) {
		failed = groups.Groups
	} else if err != nil {
		return s.servesResource // nothing usable: ask for each kind
	}
	return func(gvr schema.GroupVersionResource) bool {
		if _, ok := failed[gvr.GroupVersion()]; ok {
			return s.servesResource(gvr)
		}
		return served[gvr]
	}
}

// servesResource reports whether discovery lists gvr's resource at its group and version.
func (s *Scheduler) servesResource(gvr schema.GroupVersionResource) bool {
	list, err := s.client.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return false
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == gvr.Resource })
}

// tombstone unwraps a delete event's object.
func tombstone[T any](obj any) (T, bool) {
	if t, ok := obj.(T); ok {
		return t, true
	}
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		t, ok := d.Obj.(T)
		return t, ok
	}
	var zero T
	return zero, false
}
