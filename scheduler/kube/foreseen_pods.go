package kube

import "github.com/arbiterhq/arbiter/scheduler"

// This file adds to a new Job's workload the pods its controller has yet to make, read from
// its template (scheduler/foreseen_pods.go says why and what a cycle does with them).

// foreseesPodsOf reports whether the cache foresees the pods a top owner's controller has yet
// to make: a Job of this scheduler's that is a gang (two pods or more, made a few at a time),
// its own top owner (S4), neither suspended nor finished, created less than
// scheduler.ForeseenPodsFor ago by the cache's clock. A one-pod Job's pod comes in its
// controller's first step; counting thousands of them before it (a fill of 4,000 one-GPU
// Jobs, its Job controller half a minute behind) nearly doubled Arbiter's CPU and multiplied
// PostgreSQL's by ten (waiting Jobs' records rewritten as their queue positions moved). Other kinds make their pods through objects of their own (a
// JobSet's Jobs, a Kubeflow job's roles) and wait for them as before.
func (c *Cache) foreseesPodsOf(o *owner) bool {
	return o != nil && o.Kind == "Job" && o.Group == "batch" && o.TemplateCount > 1 && !o.Unknown && !o.Suspended && !o.Finished &&
		(o.Controller == nil || o.Controller.Kind == "CronJob") &&
		o.Template != nil && o.Template.Spec.SchedulerName == c.schedulerName &&
		c.clock().Sub(o.Created) < scheduler.ForeseenPodsFor
}

// addForeseenPods appends to a Job's workload, whose controller has made made of its pods so
// far, the ones it has yet to make (as many as it keeps running, less those made).
func (c *Cache) addForeseenPods(w *scheduler.Workload, o *owner, made int) {
	missing := int(o.TemplateCount) - made
	if missing <= 0 {
		return
	}
	template := c.templateWorkload(o, scheduler.PhasePending, o.Created).Pods
	if len(template) == 0 {
		return
	}
	for range missing {
		p := template[0]
		p.UID, p.Name, p.Foreseen = "", "", true
		w.Pods = append(w.Pods, p)
	}
	w.PodsDue = o.Created.Add(scheduler.ForeseenPodsFor)
}

// foreseenWorkload is a new Job's workload before its controller has made any pod.
func (c *Cache) foreseenWorkload(o *owner) *builtWorkload {
	w := c.templateWorkload(o, scheduler.PhasePending, o.Created)
	for i := range w.Pods {
		w.Pods[i].UID, w.Pods[i].Name, w.Pods[i].Foreseen = "", "", true
	}
	w.PodsDue = o.Created.Add(scheduler.ForeseenPodsFor)
	return &builtWorkload{w: w, meta: &WorkloadMeta{Owner: o.ref(), Suspendable: true,
		GroupedBy: "A new Job: its pods are those its template will make, until its controller has made them."}}
}
