package kube

import "github.com/arbiterhq/arbiter/scheduler"

// This file adds to a new gang's workload the pods its controllers have yet to make, read from
// its templates (scheduler/foreseen_pods.go says why and what a cycle does with them).

// foreseesPodsOf reports whether the cache foresees the pods a top owner's controllers have
// yet to make: a gang of this scheduler's (two pods or more, made a few at a time) that is its
// own top owner (S4) — a Job (or a CronJob's), or a JobSet, whose pods come through Jobs it
// makes first — neither suspended nor finished, created less than scheduler.ForeseenPodsFor
// ago by the cache's clock. A one-pod Job's pod comes in its controller's first step;
// counting thousands of them before it (a fill of 4,000 one-GPU Jobs, its Job controller half
// a minute behind) nearly doubled Arbiter's CPU and multiplied PostgreSQL's by ten (waiting
// Jobs' records rewritten as their queue positions moved). Other kinds make their pods
// themselves in one step (a Kubeflow job's roles) or grow them (Ray, LeaderWorkerSet's groups)
// and wait for them as before.
func (c *Cache) foreseesPodsOf(o *owner) bool {
	if o == nil || o.Unknown || o.Suspended || o.Finished {
		return false
	}
	switch {
	case o.Kind == "Job" && o.Group == "batch":
		if o.TemplateCount <= 1 || o.Controller != nil && o.Controller.Kind != "CronJob" {
			return false
		}
	case o.Kind == "JobSet" && o.Group == "jobset.x-k8s.io":
		if o.Controller != nil {
			return false // a TrainJob's: its gang is the TrainJob's
		}
	default:
		return false
	}
	// The clock last: every owner written to the cache asks, and most are of no such kind.
	if c.clock().Sub(o.Created) >= scheduler.ForeseenPodsFor {
		return false
	}
	roles := c.rolesOf(o)
	pods := int32(0)
	for _, r := range roles {
		pods += r.Count
	}
	return pods > 1 && c.ours(roles)
}

// addForeseenPods appends to a new gang's workload the pods its controllers have yet to make:
// per pod set (a JobSet's replicated job; a Job has one), as many as its template makes, less
// those made so far (have: its pods not terminating, by pod set; it is used up).
func (c *Cache) addForeseenPods(w *scheduler.Workload, o *owner, have map[string]int) {
	added := false
	for _, p := range c.templateWorkload(o, scheduler.PhasePending, o.Created).Pods {
		if have[p.PodSet] > 0 {
			have[p.PodSet]--
			continue
		}
		p.UID, p.Name, p.Foreseen = "", "", true
		w.Pods = append(w.Pods, p)
		added = true
	}
	if added {
		w.PodsDue = o.Created.Add(scheduler.ForeseenPodsFor)
	}
}

// foreseenWorkload is a new gang's workload before its controllers have made any pod.
func (c *Cache) foreseenWorkload(o *owner) *builtWorkload {
	w := c.templateWorkload(o, scheduler.PhasePending, o.Created)
	for i := range w.Pods {
		w.Pods[i].UID, w.Pods[i].Name, w.Pods[i].Foreseen = "", "", true
	}
	w.PodsDue = o.Created.Add(scheduler.ForeseenPodsFor)
	return &builtWorkload{w: w, meta: &WorkloadMeta{Owner: o.ref(), Suspendable: true,
		GroupedBy: "A new " + o.Kind + ": its pods are those its template will make, until its controllers have made them."}}
}
