package kube

import (
	"sync/atomic"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Workloads is the cluster client for the workloads people submit and change (the workloads
// service's cluster side): it creates, deletes, stops and runs again submitted workloads
// (submit.go), labels a workload's top owner (labels.go), foresees a workload that is not
// created yet (foresee.go) and says how and when a top owner stopped or ended. It shares the
// scheduler's clients and cache, and so sees what the scheduling loop sees, but runs no loop
// and decides nothing of a cycle; Scheduler is the loop.
type Workloads struct {
	schedulerName string
	client        kubernetes.Interface
	dynamic       dynamic.Interface
	cache         *Cache
	// settings and last are the loop's: the configuration a dry run resolves with, and the
	// last cycle's result, where the owner of a kind Arbiter does not watch is found.
	settings *atomic.Pointer[Settings]
	last     *atomic.Pointer[Result]
	served   *servedKinds // discovery's last answer on the kinds a submission may be made as
}

// Workloads is the client for submitted and changed workloads, on this scheduler's clients
// and cache.
func (s *Scheduler) Workloads() *Workloads {
	return &Workloads{schedulerName: s.opts.SchedulerName, client: s.client, dynamic: s.dynamic, cache: s.cache,
		settings: &s.settings, last: &s.last, served: &s.served}
}

// OwnerStopped reports whether a workload's top owner was suspended by its owner, not by
// Arbiter (a Job stopped through the submission API or by hand): it waits, Suspended.
func (w *Workloads) OwnerStopped(uid string) bool { return w.cache.OwnerStopped(uid) }

// OwnerOutcome reports how a workload that left the cluster's active set ended, when its top
// owner is still known (see Cache.OwnerOutcome).
func (w *Workloads) OwnerOutcome(uid string) (finished, failed, known bool) {
	return w.cache.OwnerOutcome(uid)
}

// OwnerEnded is when a workload's finished top owner ended, as the cluster says (see
// Cache.OwnerEnded); zero when not known.
func (w *Workloads) OwnerEnded(uid string) time.Time { return w.cache.OwnerEnded(uid) }
