package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
)

// The start estimate of every waiting workload (docs/scheduling.md "Estimated start") is made
// here, off the scheduling goroutine: a pass takes the last cycle's snapshot and simulates
// forward (scheduler.EstimateStarts). It costs far more than a cycle (tens of cycles), so it
// runs at most every estimateEvery, and never more than a tenth of the time: a pass that took
// 600 ms waits 6 s before the next. Only the leader has cycles, so only its passes run; it
// shares their estimates with the workload records (recorder.shareEstimates), which every
// replica reads, so that each answers the same.

const (
	estimateEvery = 5 * time.Second
	// mediansEvery bounds the median-runtime query to one a minute, whatever the passes.
	mediansEvery = time.Minute
	// mediansWindow is how far back completed workloads count towards a median runtime.
	mediansWindow = 30 * 24 * time.Hour
	// maxEstimates bounds the estimates shared (one per waiting workload of the last pass).
	maxEstimates = 100000
)

// estimator makes the passes and shares each one's estimates, by workload UID.
type estimator struct {
	last    func() *kube.Result
	medians func(ctx context.Context, since time.Time) ([]store.RuntimeMedian, error)
	// share takes each pass's estimates, a new map each time that the estimator does not touch
	// again (the current term's recorder.shareEstimates; nothing on a replica not leading).
	share func(map[string]scheduler.Estimate)
	log   *slog.Logger

	mu sync.RWMutex
	// what the last pass was made from, and the medians last read (written under mu, which
	// the pass goroutine alone writes, so it reads them without)
	from       time.Time
	runtimes   map[scheduler.RuntimeKey]time.Duration
	runtimesAt time.Time
}

// run makes a pass whenever a newer cycle than the last pass's has run, at the pace above,
// until ctx ends.
func (e *estimator) run(ctx context.Context) {
	wait := estimateEvery
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		began := time.Now()
		if !e.pass(ctx) {
			wait = time.Second // nothing new yet: look again soon
			continue
		}
		wait = max(estimateEvery, 10*time.Since(began))
	}
}

// pass estimates from the last cycle's snapshot, if it is newer than the last pass's.
func (e *estimator) pass(ctx context.Context) bool {
	r := e.last()
	if r == nil || r.View == nil || !r.At.After(e.from) {
		return false
	}
	// r.Plan is the cycle's plan of this very snapshot: the estimate goes on from it
	est := r.View.Snapshot.EstimateStarts(scheduler.EstimateInput{Medians: e.readMedians(ctx, r.At), First: r.Plan})
	if len(est) > maxEstimates {
		e.log.Warn("too many waiting workloads to keep every start estimate", "waiting", len(est), "kept", maxEstimates)
		for uid := range est {
			if len(est) <= maxEstimates {
				break
			}
			delete(est, uid)
		}
	}
	e.mu.Lock()
	e.from = r.At
	e.mu.Unlock()
	if e.share != nil {
		e.share(est)
	}
	return true
}

// readMedians returns the median runtimes, read again at most every mediansEvery; when the
// database does not answer, the last ones read.
func (e *estimator) readMedians(ctx context.Context, now time.Time) map[scheduler.RuntimeKey]time.Duration {
	if e.medians == nil || (e.runtimes != nil && now.Sub(e.runtimesAt) < mediansEvery) {
		return e.runtimes
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rows, err := e.medians(ctx, now.Add(-mediansWindow))
	if err != nil {
		e.log.Warn("median runtimes not read; the start estimate uses the last ones", "err", err)
		return e.runtimes
	}
	m := make(map[scheduler.RuntimeKey]time.Duration, len(rows))
	for _, r := range rows {
		m[scheduler.RuntimeKey{Project: r.Project, Type: r.Type}] = r.Median
	}
	e.mu.Lock()
	e.runtimes, e.runtimesAt = m, now
	e.mu.Unlock()
	return m
}

// lastMedians are the median runtimes last read (a dry run's start estimate uses them); the
// map is never changed once read.
func (e *estimator) lastMedians() map[scheduler.RuntimeKey]time.Duration {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.runtimes
}
