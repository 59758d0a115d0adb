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
	// estimated is the last pass's estimates, read only by the pass goroutine (the map is
	// shared, and never changed once made)
	estimated map[string]scheduler.Estimate
}

// run makes a pass whenever a newer cycle than the last pass's has run, at the pace above,
// until ctx ends; a workload that has just begun to wait (preempted, or new) brings the next
// pass forward, within the same tenth of the time, so that it is not shown without an
// estimate for the seconds of the whole pace.
func (e *estimator) run(ctx context.Context) {
	last := time.Now() // the first pass comes at the pace: a start has cycles to make first
	var took time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		if !passDue(time.Since(last), took, e.newWaiting()) {
			continue
		}
		began := time.Now()
		if e.pass(ctx) {
			last, took = began, time.Since(began)
		}
	}
}

// passDue says whether a pass is due, since the last one began, which took took: at most a
// tenth of the time goes to passes, and beyond that one comes every estimateEvery, or sooner
// when a workload waits that the last pass did not estimate.
func passDue(since, took time.Duration, newWaiting bool) bool {
	if since < 10*took {
		return false
	}
	return newWaiting || since >= estimateEvery
}

// newWaiting says whether the last cycle left a workload waiting that the last pass did not
// estimate.
func (e *estimator) newWaiting() bool {
	r := e.last()
	if r == nil || r.Plan == nil || !r.At.After(e.from) || e.estimated == nil || len(e.estimated) >= maxEstimates {
		return false // before a first pass everything lacks one, and beyond maxEstimates some always do: the pace alone then
	}
	for i := range r.Plan.Pending {
		if _, ok := e.estimated[r.Plan.Pending[i].Workload]; !ok {
			return true
		}
	}
	return false
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
	e.estimated = est
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
