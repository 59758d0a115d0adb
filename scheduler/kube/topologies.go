package kube

// Topologies the cluster describes (S29): Kueue's and KAI's Topology objects, each an ordered
// list of node labels, widest first (spec.levels[].nodeLabel in both). They are watched when
// the API server serves them, from the start or from when their definition is installed, and
// merged with Arbiter's own (the network topologies of its API, Settings.Topologies) into each
// snapshot. By name, Arbiter's own win over the cluster's, and KAI's over Kueue's: Arbiter's are
// what its admins set for its node pools; KAI's are named by workloads (kai.scheduler/topology),
// Kueue's never are (its annotations name a level, which still works as a node label when no
// topology lists it). docs/kubernetes.md "Topologies" says the same.

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/arbiterhq/arbiter/scheduler"
)

// topologyKind is one project's Topology kind: the versions it may be served at, preferred
// first (the fields Arbiter reads are the same in each).
type topologyKind struct {
	Source   string // "kai" or "kueue": the order of the list is the precedence by name
	Group    string
	Versions []string
}

// TopologySources are the Topology kinds read, KAI's before Kueue's (see above).
var topologySources = []topologyKind{
	{Source: "kai", Group: "kai.scheduler", Versions: []string{"v1alpha1"}},
	{Source: "kueue", Group: "kueue.x-k8s.io", Versions: []string{"v1beta2", "v1beta1", "v1alpha1"}},
}

func (k topologyKind) gvr(version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.Group, Version: version, Resource: "topologies"}
}

// Bounds on what the cluster's Topology objects bring into every snapshot: anyone who may
// create a Topology chooses them.
const (
	// maxClusterTopologies bounds the cluster's topologies a snapshot takes (by source, then
	// name); more are left out, with a warning. A cluster has a handful.
	maxClusterTopologies = 256
	// maxTopologyLevels bounds a topology's levels, as both projects' definitions do; a
	// topology with more, or with a level that is not a valid label key or is listed twice,
	// is left out with a warning.
	maxTopologyLevels = 16
)

// clusterTopologies are the Topology objects the informers report, by source and name. They
// have a lock of their own: a Topology's event never waits for the pods' lock.
type clusterTopologies struct {
	mu      sync.Mutex
	objects map[topologyKey]scheduler.Topology
	list    []scheduler.Topology // sorted by source then name, at most maxClusterTopologies; nil: made again
	log     *slog.Logger
}

type topologyKey struct{ source, name string }

// UpsertTopology records a Topology object of source ("kai" or "kueue"); one whose levels are
// not node label keys, or are too many, is left out (and forgotten if it was there).
func (c *Cache) UpsertTopology(source string, u *unstructured.Unstructured) {
	t, problem := topologyFrom(u)
	ct := &c.topologies
	ct.mu.Lock()
	if ct.objects == nil {
		ct.objects = map[topologyKey]scheduler.Topology{}
	}
	key := topologyKey{source, t.Name}
	if problem != "" {
		delete(ct.objects, key)
		if ct.log != nil {
			ct.log.Warn("topology left out", "source", source, "name", t.Name, "reason", problem)
		}
	} else {
		ct.objects[key] = t
	}
	ct.list = nil
	ct.mu.Unlock()
	c.notify()
}

// DeleteTopology forgets a Topology object of source.
func (c *Cache) DeleteTopology(source, name string) {
	ct := &c.topologies
	ct.mu.Lock()
	delete(ct.objects, topologyKey{source, name})
	ct.list = nil
	ct.mu.Unlock()
	c.notify()
}

// topologyFrom reads a Topology's name and spec.levels[].nodeLabel, and says why it cannot be
// used, if it cannot.
func topologyFrom(u *unstructured.Unstructured) (scheduler.Topology, string) {
	t := scheduler.Topology{Name: u.GetName()}
	levels, _, _ := unstructured.NestedSlice(u.Object, "spec", "levels")
	if len(levels) == 0 {
		return t, "it has no levels"
	}
	if len(levels) > maxTopologyLevels {
		return t, "it has more than 16 levels"
	}
	for i, l := range levels {
		m, _ := l.(map[string]any)
		label, _ := m["nodeLabel"].(string)
		if errs := validation.IsQualifiedName(label); len(errs) > 0 {
			return t, "level " + strconv.Itoa(i) + " is not a node label key: " + strings.Join(errs, "; ")
		}
		if slices.Contains(t.Levels, label) {
			return t, "level " + strconv.Itoa(i) + " repeats " + label
		}
		t.Levels = append(t.Levels, label)
	}
	return t, ""
}

// merged is Arbiter's own topologies, then the cluster's whose names those do not take.
func (ct *clusterTopologies) merged(own []scheduler.Topology) []scheduler.Topology {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if len(ct.objects) == 0 {
		return own
	}
	if ct.list == nil {
		keys := make([]topologyKey, 0, len(ct.objects))
		for k := range ct.objects {
			keys = append(keys, k)
		}
		rank := func(source string) int {
			return slices.IndexFunc(topologySources, func(k topologyKind) bool { return k.Source == source })
		}
		slices.SortFunc(keys, func(a, b topologyKey) int {
			if d := rank(a.source) - rank(b.source); d != 0 {
				return d
			}
			return strings.Compare(a.name, b.name)
		})
		if len(keys) > maxClusterTopologies {
			if ct.log != nil {
				ct.log.Warn("the cluster has more topologies than a snapshot takes; the last by source and name are left out", "topologies", len(keys), "taken", maxClusterTopologies)
			}
			keys = keys[:maxClusterTopologies]
		}
		ct.list = make([]scheduler.Topology, 0, len(keys))
		for _, k := range keys {
			ct.list = append(ct.list, ct.objects[k])
		}
	}
	out := slices.Clone(own)
	for _, t := range ct.list {
		if !slices.ContainsFunc(out, func(o scheduler.Topology) bool { return o.Name == t.Name }) {
			out = append(out, t)
		}
	}
	return out
}

// watchTopologies watches the Topology kinds the API server serves (served: what discovery
// said at the start), and those whose definitions are installed later (through the
// definitions' informer of f).
func (s *Scheduler) watchTopologies(ctx context.Context, dyn dynamicinformer.DynamicSharedInformerFactory, meta metadatainformer.SharedInformerFactory, served func(schema.GroupVersionResource) bool) error {
	s.cache.topologies.log = s.log
	var mu sync.Mutex
	watched := map[string]bool{}
	// start watches kind at the first version served says is served, once.
	start := func(kind topologyKind, served func(schema.GroupVersionResource) bool) bool {
		mu.Lock()
		defer mu.Unlock()
		if watched[kind.Source] {
			return true
		}
		for _, v := range kind.Versions {
			if !served(kind.gvr(v)) {
				continue
			}
			inf := dyn.ForResource(kind.gvr(v)).Informer()
			_ = inf.SetTransform(keepTopologyFields) // fails only once started, and each kind is started once
			reg, err := inf.AddEventHandler(topologyEvents(s.cache, kind.Source))
			if err != nil {
				return false
			}
			watched[kind.Source] = true
			s.ownersMu.Lock()
			s.ownersSynced = append(s.ownersSynced, reg.HasSynced)
			s.ownersMu.Unlock()
			dyn.Start(ctx.Done())
			return true
		}
		return false
	}
	for _, k := range topologySources {
		start(k, served)
	}
	crds := meta.ForResource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).Informer()
	_, err := crds.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			crd, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok {
				return
			}
			for _, k := range topologySources {
				if crd.Name != "topologies."+k.Group {
					continue
				}
				// The definition may not be served yet; poll discovery briefly off the event
				// goroutine, as for owner kinds.
				go func() {
					for i := 0; i < 50 && ctx.Err() == nil && !start(k, s.servesResource); i++ {
						time.Sleep(200 * time.Millisecond)
					}
				}()
			}
		},
	})
	meta.Start(ctx.Done())
	return err
}

// topologyEvents feeds a Topology informer's objects to the cache.
func topologyEvents(c *Cache, source string) cache.ResourceEventHandlerFuncs {
	upsert := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			c.UpsertTopology(source, u)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    upsert,
		UpdateFunc: func(_, obj any) { upsert(obj) },
		DeleteFunc: func(obj any) {
			if u, ok := tombstone[*unstructured.Unstructured](obj); ok {
				c.DeleteTopology(source, u.GetName())
			}
		},
	}
}

// keepTopologyFields keeps of a Topology only what is read (its name and levels' node labels,
// at most one more than maxTopologyLevels, so that too many still shows), so that the
// informer's store holds little whatever else the objects carry.
func keepTopologyFields(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	levels, _, _ := unstructured.NestedSlice(u.Object, "spec", "levels")
	kept := make([]any, 0, min(len(levels), maxTopologyLevels+1))
	for _, l := range levels[:min(len(levels), maxTopologyLevels+1)] {
		m, _ := l.(map[string]any)
		kept = append(kept, map[string]any{"nodeLabel": m["nodeLabel"]})
	}
	slim := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
		"metadata": map[string]any{"name": u.GetName(), "uid": string(u.GetUID()), "resourceVersion": u.GetResourceVersion()},
		"spec":     map[string]any{"levels": kept}}}
	return slim, nil
}
