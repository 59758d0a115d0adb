package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

// This file reads from the cluster what a leader did and may not have recorded before it
// stopped: a leader binds first and writes its records and events a moment later, so one that
// dies in between leaves bound pods without their Scheduled event and, when such a workload
// finishes before the next leader takes over, no record at all. The next leader reconciles
// both when its term starts (server/takeover.go).

// WaitSynced waits until the cache holds the informers' first lists (Run), or ctx ends.
func (s *Scheduler) WaitSynced(ctx context.Context) error {
	return waitClosed(ctx, s.synced, "the cache has not synced")
}

// WaitFirstBind waits until this process has had its first bind answered (or a cycle that
// binds nothing has applied its plan), or ctx ends: start-up work that can wait, and takes
// the CPU, waits for it (server.bootstrapAdmin) rather than slow the first bind.
func (s *Scheduler) WaitFirstBind(ctx context.Context) error {
	return waitClosed(ctx, s.firstBind, "no bind has been answered yet")
}

// waitClosed waits until ch is closed, or ctx ends (an error saying what had not happened).
func waitClosed(ctx context.Context, ch <-chan struct{}, notYet string) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kube: %s: %w", notYet, ctx.Err())
	}
}

// FinishedWorkload is a finished workload of Arbiter's, as the cluster shows it.
type FinishedWorkload struct {
	UID, Namespace, Name, Kind, Group   string
	Type, Category, Project, Department string
	ProjectID                           string // the project's id (records name it by id); empty for none
	Submitter                           string // the Job's scheduler.AnnotationSubmitter
	Failed                              bool
	Gang, RequestedGPUs                 int
	Nodes                               []string // where its pods still in the cluster ran
	QueuedAt, FinishedAt                time.Time
	StartedAt                           time.Time // zero: none of its pods was ever bound
}

// FinishedWorkloads lists the finished top owners whose pod templates name Arbiter's
// scheduler (Jobs; custom resources whose status says they finished, readOutcome) and the
// finished bare pods Arbiter bound, sorted by UID: the workloads that can have run and ended
// between one leader's last record and the next leader's first cycle. A Job stays in the
// cluster, and so in the cache, after it finishes, until it is deleted (its
// ttlSecondsAfterFinished, or a person), as a finished custom resource does; a pod that
// succeeded or failed, until it is deleted (by a person, or the pod garbage collector past its
// threshold of ended pods).
func (s *Scheduler) FinishedWorkloads() []FinishedWorkload {
	s.cache.SetSettings(s.settings.Load()) // types and projects resolve as in a cycle
	return s.cache.finishedWorkloads()
}

func (c *Cache) finishedWorkloads() []FinishedWorkload {
	c.mu.RLock()
	defer c.mu.RUnlock()
	x := &c.index
	category := make(map[string]string, len(x.settings.WorkloadTypes))
	for _, t := range x.settings.WorkloadTypes {
		category[t.Name] = t.Category
	}
	department := make(map[string]string, len(x.settings.Projects))
	projectID := make(map[string]string, len(x.settings.Projects))
	for _, p := range x.settings.Projects {
		department[p.Name], projectID[p.Name] = p.Department, p.ID
	}
	boundPods := map[types.UID][]*podEntry{} // by top owner (a JobSet's pods are its Jobs')
	succeeded, unfinished := map[types.UID]int32{}, map[types.UID]bool{}
	var out []FinishedWorkload
	for _, e := range c.pods {
		if !e.ours {
			continue
		}
		if e.controller == nil {
			if !e.active && e.pod.NodeName != "" {
				out = append(out, c.finishedBarePod(e))
			}
			continue
		}
		if e.pod.NodeName != "" {
			top, _, _ := c.topOwner(e)
			boundPods[top.UID] = append(boundPods[top.UID], e)
		}
		if e.active {
			unfinished[e.controller.UID] = true
		} else if e.phase == corev1.PodSucceeded {
			succeeded[e.controller.UID]++
		}
	}
	for _, o := range c.owners {
		roles := c.rolesOf(o)
		if !c.ours(roles) {
			continue // every pod template names this scheduler, or the workload is not Arbiter's
		}
		if !o.Finished && !endedByItsPods(o, succeeded[o.UID], unfinished[o.UID]) {
			continue
		}
		if o.Controller != nil && o.Controller.Kind != "CronJob" {
			continue // a workload is its top owner (topOwner): this one is part of another
		}
		gang, gpus := finishedSize(o, roles)
		w := FinishedWorkload{
			UID: string(o.UID), Namespace: o.Namespace, Name: o.Name, Kind: o.Kind, Group: o.Group,
			Type: workloadType(o, x.typeByKind, x.typeBySlug), Submitter: o.Annotations[scheduler.AnnotationSubmitter],
			Project: projectOf(o.Labels, roles[0].Template.Labels, o.Namespace, x.settings.NamespaceProject, x.projects),
			Failed:  o.Failed, Gang: gang, RequestedGPUs: gpus,
			QueuedAt: queuedAt(o, o.Created), FinishedAt: o.Ended,
		}
		for _, e := range boundPods[o.UID] {
			if !slices.Contains(w.Nodes, e.pod.NodeName) {
				w.Nodes = append(w.Nodes, e.pod.NodeName)
			}
			if at := e.startedOrBound(); !at.IsZero() && (w.StartedAt.IsZero() || at.Before(w.StartedAt)) {
				w.StartedAt = at
			}
		}
		if w.StartedAt.IsZero() && o.Gang.Succeeded > 0 {
			w.StartedAt = o.Started // its pods are gone, but some ran: the Job's start
		}
		slices.Sort(w.Nodes)
		out = append(out, w)
	}
	for i := range out {
		w := &out[i]
		w.Category, w.Department, w.ProjectID = category[w.Type], department[w.Project], projectID[w.Project]
		if w.FinishedAt.IsZero() {
			w.FinishedAt = time.Now() // no end known: when it was noticed
		}
	}
	slices.SortFunc(out, func(a, b FinishedWorkload) int { return strings.Compare(a.UID, b.UID) })
	return out
}

// finishedSize is a finished top owner's gang and the GPUs it asked for: a Job's pods at once
// (its parallelism, at most its completions), a custom resource's the sum of its roles' (a
// PyTorchJob's master and workers, a JobSet's replicated jobs).
func finishedSize(o *owner, roles []podRole) (pods, gpus int) {
	if o.Kind == "Job" && o.Group == "batch" {
		count := int32(1)
		if o.Gang.Parallelism != nil {
			count = *o.Gang.Parallelism
		}
		if o.Gang.Completions != nil {
			count = min(count, *o.Gang.Completions)
		}
		roles = []podRole{{Template: roles[0].Template, Count: count}}
	}
	for _, r := range roles {
		template := schedulingPod(&corev1.Pod{ObjectMeta: r.Template.ObjectMeta, Spec: r.Template.Spec})
		pods += int(r.Count)
		gpus += int(r.Count) * int(template.Requests.GPUs)
	}
	return pods, gpus
}

// finishedBarePod is the finished workload of a bare pod Arbiter bound that succeeded or
// failed: its own workload (S4), one pod, queued when created, started when it started (else
// when it was bound), finished when its last container ended (zero when none says).
func (c *Cache) finishedBarePod(e *podEntry) FinishedWorkload {
	x := &c.index
	top, _, _ := c.topOwner(e)
	return FinishedWorkload{
		UID: e.pod.UID, Namespace: e.pod.Namespace, Name: e.pod.Name, Kind: "Pod",
		Type:    workloadType(top, x.typeByKind, x.typeBySlug),
		Project: projectOf(top.Labels, e.pod.Labels, e.pod.Namespace, x.settings.NamespaceProject, x.projects),
		Failed:  e.phase == corev1.PodFailed, Gang: 1, RequestedGPUs: int(e.pod.Requests.GPUs),
		Nodes: []string{e.pod.NodeName}, QueuedAt: e.created, StartedAt: e.startedOrBound(), FinishedAt: e.ended,
	}
}

// startedOrBound is when a pod started, as a running workload's start (groupWorkload), else
// when the API server bound it.
func (e *podEntry) startedOrBound() time.Time {
	if e.started.IsZero() {
		return e.bound
	}
	return e.started
}

// endedByItsPods reports whether a Job the Job controller has not marked finished yet has
// ended all the same: none of its pods runs or waits, and as many succeeded as it needs
// (its completions, else one). The controller marks such a Job complete a moment after its
// last pod ends; a leader that takes over in that moment finds the workload neither running
// (no pod of it is active, so no cycle sees it) nor finished, and without this it would
// never be recorded.
func endedByItsPods(o *owner, succeeded int32, unfinished bool) bool {
	if o.Kind != "Job" || o.Suspended || unfinished || succeeded == 0 {
		return false
	}
	need := int32(1)
	if o.Gang.Completions != nil {
		need = *o.Gang.Completions
	}
	return succeeded >= need
}

// boundPod is a pod of Arbiter's the API server has bound.
type boundPod struct {
	ref  ownerRef
	node string
	at   time.Time // its PodScheduled=True condition's time
}

// boundSince lists Arbiter's pods bound at or after since.
func (c *Cache) boundSince(since time.Time) []boundPod {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []boundPod
	for _, e := range c.pods {
		if !e.ours || e.pod.NodeName == "" || e.bound.IsZero() || e.bound.Before(since) {
			continue
		}
		out = append(out, boundPod{node: e.pod.NodeName, at: e.bound, ref: ownerRef{APIVersion: "v1", Kind: "Pod",
			Namespace: e.pod.Namespace, Name: e.pod.Name, UID: types.UID(e.pod.UID)}})
	}
	return out
}

// eventPage is how many events one list call returns: a cluster-wide list of a busy hour's
// Scheduled events is read a page at a time, never whole.
const eventPage = 500

// RestoreScheduledEvents writes the Scheduled event of every pod of Arbiter's bound at or
// after since that has none, dated when the API server bound it (the pod's PodScheduled
// condition), and returns how many it wrote. It lists the Scheduled events Arbiter's
// component wrote a page at a time; each call has its own deadline, and ctx bounds the whole.
// It writes nothing unless it has read every page (a pod whose event it did not see is not
// known to lack one), and nothing once may says no (a leader whose lease went). Run before
// the term's first cycle, no bind of this term can race it.
func (s *Scheduler) RestoreScheduledEvents(ctx context.Context, since time.Time, may func() bool) (int, error) {
	pods := s.cache.boundSince(since)
	if len(pods) == 0 {
		return 0, nil
	}
	have := map[types.UID]bool{}
	selector := fields.Set{"reason": EventScheduled, "source": s.opts.SchedulerName}.AsSelector().String()
	for cont := ""; ; {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		list, err := s.events.client.CoreV1().Events(metav1.NamespaceAll).List(callCtx,
			metav1.ListOptions{FieldSelector: selector, Limit: eventPage, Continue: cont})
		cancel()
		if err != nil {
			return 0, fmt.Errorf("kube: list Scheduled events: %w", err)
		}
		for _, ev := range list.Items {
			have[ev.InvolvedObject.UID] = true
		}
		if cont = list.Continue; cont == "" {
			break
		}
	}
	var missing []boundPod
	for _, p := range pods {
		if !have[p.ref.UID] {
			missing = append(missing, p)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8) // as many as the event writer's workers
	written := make(chan struct{}, len(missing))
	for _, p := range missing {
		g.Go(func() error {
			if !may() {
				return nil
			}
			ev := s.events.event(p.ref, corev1.EventTypeNormal, EventScheduled, scheduledMessage(p.ref.Namespace, p.ref.Name, p.node), p.at)
			callCtx, cancel := context.WithTimeout(gctx, callTimeout)
			defer cancel()
			if _, err := s.events.client.CoreV1().Events(ev.Namespace).Create(callCtx, ev, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("kube: Scheduled event of %s/%s: %w", p.ref.Namespace, p.ref.Name, err)
			}
			written <- struct{}{}
			return nil
		})
	}
	err := g.Wait()
	return len(written), err
}
