package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/arbiterhq/arbiter/store"
)

// waitingSeedDeadline bounds the read of the waiting times a new leader seeds its cache from.
const waitingSeedDeadline = 10 * time.Second

// waitingTimes is what seedWaiting needs of the scheduler's cache (kube.Scheduler, kube.Cache).
type waitingTimes interface {
	WaitingWorkloads() []string
	SeedWaiting(since map[string]time.Time, now time.Time) int
}

// seedWaiting gives the workloads waiting as a term starts the times they began to wait, as
// recorded (S19 spares work started after its preemptor began to wait: a leader that knew only
// its own first cycle would evict what its predecessor spared). It reads only the workloads
// the cache finds waiting, once, before the term's first cycle. Without the records (they
// cannot be read in time) the term's waiting times start at its first cycle, as before.
func seedWaiting(term context.Context, st *store.Store, cache waitingTimes, log *slog.Logger) {
	began := time.Now()
	waiting := cache.WaitingWorkloads()
	if len(waiting) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(term, waitingSeedDeadline)
	defer cancel()
	since, err := st.WaitingSince(ctx, waiting)
	if err != nil {
		log.Warn("waiting times start at this term's first cycle: the workload records could not be read", "err", err)
		return
	}
	n := cache.SeedWaiting(since, time.Now())
	log.Info("waiting times taken from the workload records", "waiting", len(waiting), "seeded", n, "took", time.Since(began).Round(time.Millisecond))
}
