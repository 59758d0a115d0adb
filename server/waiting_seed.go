package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/arbiterhq/arbiter/store"
)

// waitingSeedDeadline bounds the read of the waiting times a new leader seeds its cache from;
// waitingSeedRows bounds the rows it reads before it knows which workloads wait (about 50
// bytes each, kept until the term's first cycle).
const (
	waitingSeedDeadline = 10 * time.Second
	waitingSeedRows     = 100_000
)

// waitingTimes is what seedWaiting needs of the scheduler's cache (kube.Scheduler, kube.Cache).
type waitingTimes interface {
	WaitingWorkloads() []string
	SeedWaiting(since map[string]time.Time, now time.Time) int
}

// waitingRead is the read of every waiting time the records hold, begun by readWaiting.
type waitingRead struct {
	done     chan struct{}
	since    map[string]time.Time
	complete bool
	err      error
}

// readWaiting begins reading the waiting times of every workload the records call waiting, so
// that the read goes on while the informers list the cluster (after them, it delayed a start's
// first bind by 20 ms with 10,000 pods waiting).
func readWaiting(term context.Context, st *store.Store) *waitingRead {
	r := &waitingRead{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		ctx, cancel := context.WithTimeout(term, waitingSeedDeadline)
		defer cancel()
		r.since, r.complete, r.err = st.AllWaitingSince(ctx, waitingSeedRows)
	}()
	return r
}

// seedWaiting gives the workloads waiting as a term starts the times they began to wait, as
// recorded (S19 spares work started after its preemptor began to wait: a leader that knew only
// its own first cycle would evict what its predecessor spared), from read, once the cache has
// the informers' first lists and before the term's first cycle. Records of more waiting
// workloads than read holds are read again for the workloads the cache finds waiting. Without
// the records (they cannot be read in time) the term's waiting times start at its first cycle,
// as before.
func seedWaiting(term context.Context, st *store.Store, read *waitingRead, cache waitingTimes, log *slog.Logger) {
	began := time.Now()
	<-read.done
	since, err := read.since, read.err
	if err == nil && !read.complete {
		ctx, cancel := context.WithTimeout(term, waitingSeedDeadline)
		defer cancel()
		since, err = st.WaitingSince(ctx, cache.WaitingWorkloads())
	}
	if err != nil {
		log.Warn("waiting times start at this term's first cycle: the workload records could not be read", "err", err)
		return
	}
	n := cache.SeedWaiting(since, time.Now())
	log.Info("waiting times taken from the workload records", "records", len(since), "seeded", n, "took", time.Since(began).Round(time.Millisecond))
}
