package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

// Event reasons Arbiter records on workloads' top owners and pods.
const (
	EventPreempted    = "Preempted"
	EventPreempting   = "Preempting"
	EventSuspended    = "Suspended"
	EventResumed      = "Resumed"
	EventScheduled    = "Scheduled"
	EventFailedToBind = "FailedBinding"
	// ReasonPreemptionByArbiter is the reason of the DisruptionTarget condition on evicted pods.
	ReasonPreemptionByArbiter = "PreemptionByArbiter"
)

// apply carries out a plan: evictions and resumes first (they free and claim capacity; the
// cycle waits for them), then binds and pending reasons, handed to the worker pool. All API
// calls run with bounded concurrency; a failed call is logged and rolled back in the cache so a
// later cycle decides afresh, and an eviction or resume none of whose calls took effect is
// taken out of the plan, which the records then do not tell (a refused resume was recorded as
// Resumed at every cycle that tried it).
func (s *Scheduler) apply(ctx context.Context, plan *scheduler.Plan, view *View) {
	if !s.acting() {
		return // the lease went while deciding: the next leader decides afresh
	}
	meta := func(uid string) *WorkloadMeta {
		_, m := view.Workload(uid)
		return m
	}
	now := s.clock()
	phaseCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	g, gctx := errgroup.WithContext(phaseCtx)
	g.SetLimit(s.workers)
	// What took effect, by index in the plan's lists: the rest is taken out of the plan once
	// the calls are done, so that the records tell only what the API server carried out.
	evicted := make([]atomic.Bool, len(plan.Evictions))
	resumed := make([]atomic.Bool, len(plan.Resumes))
	for i := range plan.Evictions {
		ev := plan.Evictions[i]
		m := meta(ev.Workload)
		if m == nil {
			continue
		}
		only := map[types.UID]bool{} // replicas beyond a minimum, evicted alone (S26)
		for _, p := range ev.Pods {
			only[types.UID(p.UID)] = true
		}
		if len(only) > 0 {
			s.cache.MarkEvictingPods(ev.Workload, ev.Preemptor, slices.Collect(maps.Keys(only)))
		} else {
			s.cache.MarkEvicting(ev.Workload, ev.Preemptor, now)
		}
		preemptor, pm := view.Workload(ev.Preemptor)
		by := ev.Preemptor
		if preemptor != nil {
			by = preemptor.Namespace + "/" + preemptor.Name
		}
		msg := ev.Sentence(by)
		// Told once, when the first of its calls has gone through; a call refused or failed
		// takes the victim's marks back (its preemptor waited for evictions that never came)
		// and holds the preemptor back for a while (backoff.go), after which a cycle decides
		// afresh.
		var tell, unmark sync.Once
		took := func(suspended bool) {
			tell.Do(func() {
				evicted[i].Store(true)
				s.event(m.Owner, corev1.EventTypeWarning, EventPreempted, msg)
				if pm != nil {
					s.event(pm.Owner, corev1.EventTypeNormal, EventPreempting, fmt.Sprintf("Evicting %s/%s under %s to make room", ev.Namespace, ev.Name, ev.Rule))
				}
				s.opts.Observer.Evicted(ev.Rule, suspended)
			})
		}
		failed := func() {
			unmark.Do(func() {
				s.cache.Unmark(ev.Workload, slices.Collect(maps.Keys(only)))
				s.cache.HoldBack(ev.Preemptor, now)
			})
		}
		if ev.Mode == scheduler.Suspend && m.Suspendable && !m.Bare && len(only) == 0 {
			g.Go(func() error {
				if !s.acting() {
					failed()
					return nil
				}
				if err := s.setSuspended(gctx, m.Owner, true); err != nil {
					s.log.Warn("suspend failed", "workload", m.Owner.Namespace+"/"+m.Owner.Name, "err", err)
					failed()
					return nil
				}
				took(true)
				return nil
			})
			continue
		}
		for _, p := range m.Pods {
			if p.NodeName == "" || p.Terminating || len(only) > 0 && !only[p.UID] {
				continue
			}
			g.Go(func() error {
				if !s.acting() {
					failed()
					return nil
				}
				if err := s.evictPod(gctx, p, msg); err != nil {
					s.log.Warn("eviction failed", "pod", p.Namespace+"/"+p.Name, "err", err)
					failed()
					return nil
				}
				took(false)
				return nil
			})
		}
	}
	// What the plan set aside is kept from everyone else until its workload is bound (S19),
	// whatever becomes of the calls below: a failed eviction or resume lets the reservation
	// lapse with its nomination.
	for _, r := range plan.Reservations {
		s.cache.Reserve(r, now)
	}
	for i, r := range plan.Resumes {
		m := meta(r.Workload)
		if m == nil {
			continue
		}
		g.Go(func() error {
			if !s.acting() {
				return nil
			}
			if err := s.setSuspended(gctx, m.Owner, false); err != nil {
				s.log.Warn("resume failed", "workload", r.Namespace+"/"+r.Name, "err", err)
				s.cache.HoldBack(r.Workload, now) // still suspended: resumed again after a while
				return nil
			}
			resumed[i].Store(true)
			s.cache.Resumed(r.Workload, now)
			s.event(m.Owner, corev1.EventTypeNormal, EventResumed, fmt.Sprintf("Resumed by Arbiter in node pool %s with %d GPUs", r.NodePool, r.GPUs))
			return nil
		})
	}
	_ = g.Wait()
	plan.Evictions = tookEffect(plan.Evictions, evicted)
	plan.Resumes = tookEffect(plan.Resumes, resumed)

	// Binds are assumed in the cache and sent by the worker pool without holding up the next
	// cycle: it already counts them, and pods that arrive meanwhile need not wait for this
	// cycle's API calls (S22). Each is assumed just before it is handed over, not all before
	// the first: assuming rebuilds the pod's workload in the cache, and a start's 10,000
	// binds took 30 ms of assuming before the first was sent (BenchmarkFirstLists,
	// assume-all-ms). The next cycle begins after this one returns, when every bind is
	// assumed.
	for _, b := range plan.Binds {
		created := s.cache.Assume(types.UID(b.Pod.UID), b.Node, now)
		pod := ownerRef{APIVersion: "v1", Kind: "Pod", Namespace: b.Pod.Namespace, Name: b.Pod.Name, UID: types.UID(b.Pod.UID)}
		s.dispatch(ctx, func(ctx context.Context) {
			if !s.acting() {
				s.cache.Forget(types.UID(b.Pod.UID))
				return
			}
			err := s.client.CoreV1().Pods(b.Pod.Namespace).Bind(ctx, &corev1.Binding{
				ObjectMeta: metav1.ObjectMeta{Name: b.Pod.Name, UID: types.UID(b.Pod.UID)},
				Target:     corev1.ObjectReference{Kind: "Node", Name: b.Node},
			}, metav1.CreateOptions{})
			s.firstBound()
			if err != nil {
				s.cache.BindFailed(types.UID(b.Pod.UID), s.clock())
				s.log.Warn("bind failed", "pod", b.Pod.Namespace+"/"+b.Pod.Name, "node", b.Node, "err", err)
				s.event(pod, corev1.EventTypeWarning, EventFailedToBind, "Binding to "+b.Node+" failed: "+err.Error())
				return
			}
			s.cache.MarkBound(b.Workload, now)
			s.opts.Observer.Bound(created, time.Now())
			s.event(pod, corev1.EventTypeNormal, EventScheduled, scheduledMessage(b.Pod.Namespace, b.Pod.Name, b.Node))
		})
	}

	s.warn(plan.Warnings, view)

	for i := range plan.Pending {
		pw := &plan.Pending[i]
		m := meta(pw.Workload)
		if m == nil || pw.AwaitingPods {
			// while its controller makes its pods, its reason is the console's, not the
			// cluster's: an event and a pod condition a second for every new Job is noise
			continue
		}
		key := string(pw.Reason) + "\x00" + pw.Message
		if s.lastReason[pw.Workload] != key {
			s.lastReason[pw.Workload] = key
			s.event(m.Owner, corev1.EventTypeNormal, string(pw.Reason), pw.Message)
		}
		for _, p := range m.Pods {
			if p.NodeName != "" || p.ScheduledReason == key {
				continue
			}
			// The same reason in other words (the free GPUs it counts changed) waits for
			// pendingRefresh: a waiting pod is not written again with every bind elsewhere.
			// By the wall clock, as the condition's time is written.
			if told, _, _ := strings.Cut(p.ScheduledReason, "\x00"); told == string(pw.Reason) && time.Since(p.ScheduledAt) < pendingRefresh {
				continue
			}
			// Remembered before the call so the next cycle does not write it again; forgotten
			// if the call fails, so a later cycle retries.
			s.cache.SetScheduledReason(p.UID, key, time.Now())
			s.dispatch(ctx, func(ctx context.Context) {
				if !s.acting() {
					s.cache.SetScheduledReason(p.UID, "", time.Time{})
					return
				}
				if err := s.patchPodCondition(ctx, p, corev1.PodCondition{
					Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: string(pw.Reason), Message: pw.Message,
				}); err != nil {
					s.cache.SetScheduledReason(p.UID, "", time.Time{})
					if !apierrors.IsNotFound(err) {
						s.log.Debug("pending reason not written", "pod", p.Name, "err", err)
					}
				}
			})
		}
	}
	// Forget reasons of workloads that no longer wait.
	if len(s.lastReason) > len(plan.Pending) {
		waiting := make(map[string]bool, len(plan.Pending))
		for _, p := range plan.Pending {
			waiting[p.Workload] = true
		}
		for uid := range s.lastReason {
			if !waiting[uid] {
				delete(s.lastReason, uid)
			}
		}
	}
}

// firstBound notes that a bind has been answered, or that a cycle applied a plan that binds
// nothing (WaitFirstBind); after the first call it costs one atomic load.
func (s *Scheduler) firstBound() {
	if s.firstBind != nil { // nil: a scheduler built by a test, not New
		s.firstBindOnce.Do(func() { close(s.firstBind) })
	}
}

// callTimeout bounds each API call of a plan, so that a frozen API server holds no worker
// (nor an eviction the cycle waits for) for ever.
const callTimeout = 15 * time.Second

// evictPod marks a pod with a DisruptionTarget condition and deletes it (S20 terminate).
func (s *Scheduler) evictPod(ctx context.Context, p PodMeta, msg string) error {
	err := s.patchPodCondition(ctx, p, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonPreemptionByArbiter, Message: msg,
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	err = s.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func (s *Scheduler) patchPodCondition(ctx context.Context, p PodMeta, cond corev1.PodCondition) error {
	cond.LastTransitionTime = metav1.Now()
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": p.UID},
		"status":   map[string]any{"conditions": []corev1.PodCondition{cond}},
	})
	if err != nil {
		return err
	}
	_, err = s.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// setSuspended flips a top owner's suspend switch (S20): spec.suspend for Jobs, JobSets,
// TrainJobs, RayClusters and RayJobs, spec.runPolicy.suspend for Kubeflow's jobs (kinds.go). Suspending marks the object as suspended by
// Arbiter, so that only Arbiter's suspensions are resumed by Arbiter.
func (s *Scheduler) setSuspended(ctx context.Context, o ownerRef, suspend bool) error {
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return err
	}
	resource, ok := resourceOf(gv.Group, o.Kind)
	if !ok {
		return fmt.Errorf("kind %s cannot be suspended", o.Kind)
	}
	spec := map[string]any{"suspend": suspend}
	if gv.Group == "kubeflow.org" {
		spec = map[string]any{"runPolicy": map[string]any{"suspend": suspend}}
	}
	var annotation any // JSON null removes it
	if suspend {
		annotation = "arbiter"
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": o.UID, "annotations": map[string]any{AnnotationSuspendedBy: annotation}},
		"spec":     spec,
	})
	if err != nil {
		return err
	}
	_, err = s.dynamic.Resource(gv.WithResource(resource)).Namespace(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err == nil && suspend {
		s.event(o, corev1.EventTypeNormal, EventSuspended, "Suspended by Arbiter; it keeps its place in the queue and resumes when admitted again")
	}
	return err
}

func resourceOf(group, kind string) (string, bool) {
	for _, k := range watchedOwners {
		if k.GVR.Group == group && k.Kind == kind {
			return k.GVR.Resource, true
		}
	}
	return "", false
}

// scheduledMessage is the message of a pod's Scheduled event, as kube-scheduler words it.
func scheduledMessage(namespace, name, node string) string {
	return "Successfully assigned " + namespace + "/" + name + " to " + node
}

// event records a Kubernetes event on an object.
func (s *Scheduler) event(o ownerRef, eventType, reason, message string) {
	if s.events != nil {
		s.events.emit(o, eventType, reason, message)
	}
}

// warn records each resolution warning (an invalid label, a clamped priority, ...) as a
// Warning event on the workload, once for as long as the warning lasts.
func (s *Scheduler) warn(warnings []scheduler.Warning, view *View) {
	current := make(map[string]bool, len(warnings))
	for _, w := range warnings {
		key := w.Workload + "\x00" + string(w.Code) + "\x00" + w.Message
		current[key] = true
		if s.warned[key] {
			continue
		}
		s.warned[key] = true
		if _, m := view.Workload(w.Workload); m != nil {
			s.event(m.Owner, corev1.EventTypeWarning, string(w.Code), w.Message)
		}
	}
	for key := range s.warned {
		if !current[key] {
			delete(s.warned, key)
		}
	}
}

// runWorkers starts the pool that makes the API calls of binds and pending reasons.
// Each task asks Options.Acting again when its turn comes.
func (s *Scheduler) runWorkers(ctx context.Context) {
	startWorkers(ctx, s.workers, s.tasks, func(task func(context.Context)) {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		task(callCtx)
	})
}

// dispatch hands a call to the worker pool, waiting while the pool's queue is full.
func (s *Scheduler) dispatch(ctx context.Context, task func(context.Context)) {
	select {
	case s.tasks <- task:
	case <-ctx.Done():
	}
}

// pendingRefresh is how often a pod already told why it waits is told again when only the
// sentence changed (S23).
const pendingRefresh = 30 * time.Second

// tookEffect keeps, in place, the entries of list whose calls took effect.
func tookEffect[T any](list []T, took []atomic.Bool) []T {
	kept := list[:0]
	for i := range list {
		if took[i].Load() {
			kept = append(kept, list[i])
		}
	}
	return kept
}
