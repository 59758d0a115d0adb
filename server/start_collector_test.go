package server

import (
	"io"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// fakeCollector records what a hold does to the runtime's knobs.
type fakeCollector struct {
	mu      sync.Mutex
	percent int
	limit   int64
	heap    atomic.Int64
}

func (f *fakeCollector) controls(cgroup int64, gogcSet bool) collectorControls {
	return collectorControls{
		setPercent: func(p int) int { f.mu.Lock(); defer f.mu.Unlock(); old := f.percent; f.percent = p; return old },
		setLimit: func(l int64) int64 {
			f.mu.Lock()
			defer f.mu.Unlock()
			old := f.limit
			if l >= 0 {
				f.limit = l
			}
			return old
		},
		heapBytes: f.heap.Load, cgroupMax: func() int64 { return cgroup }, gogcSet: gogcSet,
	}
}

func (f *fakeCollector) state() (int, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.percent, f.limit
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// A start holds the collector (off, under the hold's memory limit) until its first bind,
// then gives Go's pacing and the memory limit back, once.
func TestTheCollectorIsHeldUntilTheFirstBind(t *testing.T) {
	f := &fakeCollector{percent: 100, limit: math.MaxInt64}
	h := holdCollector(f.controls(0, false), quiet)
	if p, l := f.state(); p != -1 || l != startHeapCap {
		t.Fatalf("held: GC percent %d, limit %d; want off (-1) under %d", p, l, startHeapCap)
	}
	h.release("the first bind")
	h.release("again")
	if p, l := f.state(); p != 100 || l != math.MaxInt64 {
		t.Errorf("released: GC percent %d, limit %d; want Go's pacing back (100, no limit)", p, l)
	}
}

// The hold ends by itself once the heap reaches half what it allows: a cluster large enough
// to fill it starts with Go's pacing, not with a collector running at its limit.
func TestTheCollectorsHoldEndsAtHalfItsHeap(t *testing.T) {
	f := &fakeCollector{percent: 100, limit: math.MaxInt64}
	holdCollector(f.controls(0, false), quiet)
	f.heap.Store(startHeapCap/2 - 1)
	time.Sleep(3 * startHoldPoll)
	if p, _ := f.state(); p != -1 {
		t.Fatalf("the heap below half the hold ended it (GC percent %d)", p)
	}
	f.heap.Store(startHeapCap / 2)
	poll.Until(t, "the hold to end once the heap reached half of it", 5*time.Second, func() bool {
		p, l := f.state()
		return p == 100 && l == math.MaxInt64
	})
}

// GOGC set by the operator stands: nothing is held, and releasing changes nothing.
func TestTheOperatorsGOGCStands(t *testing.T) {
	f := &fakeCollector{percent: 50, limit: math.MaxInt64}
	h := holdCollector(f.controls(0, true), quiet)
	h.release("the first bind")
	if p, l := f.state(); p != 50 || l != math.MaxInt64 {
		t.Errorf("GOGC set: GC percent %d, limit %d; want them untouched (50, no limit)", p, l)
	}
}

// The heap the hold allows: the cap, or less under the process's memory limit, or half its
// cgroup's.
func TestStartHeapHold(t *testing.T) {
	for _, c := range []struct {
		name          string
		limit, cgroup int64
		want          int64
	}{
		{"no limit, no cgroup limit", math.MaxInt64, 0, startHeapCap},
		{"GOMEMLIMIT below the cap", 200 << 20, 0, 200 << 20},
		{"a cgroup of 1 GiB", math.MaxInt64, 1 << 30, 512 << 20},
		{"a large cgroup", math.MaxInt64, 64 << 30, startHeapCap},
		{"both: the smaller", 300 << 20, 512 << 20, 256 << 20},
	} {
		if got := startHeapHold(c.limit, c.cgroup); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// Only a process's first start holds the collector: the knobs are the process's, and a second
// hold would keep the first one's settings as Go's (a test process starts many servers).
func TestOnlyAProcesssFirstStartHoldsTheCollector(t *testing.T) {
	startHoldTaken.Store(true) // as after a first start, this process's or another test's
	if h := holdCollectorForStart(quiet); h.holding() {
		h.release("the test")
		t.Error("a second start held the collector")
	}
}
