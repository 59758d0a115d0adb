package server

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Go's garbage collector in the first second: while the informers decode their first lists
// (10,000 pods, 5,000 Jobs and 1,250 nodes on the backlog benchmark) the heap grows from a
// few MB to about 115 MB, and with Go's default pacing the collector ran 10 or 11 times in
// that second, about 0.3 CPU-seconds of the two cores the API server encodes those lists on
// (docs/performance.md "The garbage collector in the first second"). So a start holds the
// collector back until its first bind has been answered (a standby: until its lists are in),
// under a cap on the heap, and then gives Go's pacing back; the collection that follows frees
// what the lists left. Alternate Arbiter-only backlog rounds, four each: the informers synced
// 682–797 ms after the start with the collector held, 903–1,206 ms without; first binds
// 0.82–1.01 s against 1.07–1.42 s.

const (
	// startHeapCap bounds the heap while the collector is held: past half of it (or half of
	// the memory limit the process runs under, or of its cgroup's, if smaller) the hold ends.
	startHeapCap int64 = 1 << 30
	// startHoldMost bounds the hold's time, whatever the first bind does.
	startHoldMost = 30 * time.Second
	// startHoldPoll is how often the heap is looked at while the collector is held: the lists
	// decode at a few hundred MB a second, so the heap moves by MBs between two looks.
	startHoldPoll = 20 * time.Millisecond
)

// collectorHold holds Go's garbage collector back for a start; release gives its pacing back.
type collectorHold struct {
	runtime collectorControls
	log     *slog.Logger

	percent int   // Go's pacing before the hold (GOGC's)
	limit   int64 // the memory limit before the hold (GOMEMLIMIT's, or none)
	once    sync.Once
	done    chan struct{} // closed by release; nil when nothing is held
}

// holding says whether this start holds the collector.
func (h *collectorHold) holding() bool { return h.done != nil }

// collectorControls are the runtime's knobs and the heap's size (tests give their own).
type collectorControls struct {
	setPercent func(int) int
	setLimit   func(int64) int64
	heapBytes  func() int64 // the bytes of heap objects, live or not yet collected
	cgroupMax  func() int64 // the cgroup's memory limit, 0 if none
	gogcSet    bool         // GOGC is set: the operator's pacing stands from the start
}

// realCollector is the process's own runtime.
func realCollector() collectorControls {
	_, gogc := os.LookupEnv("GOGC")
	return collectorControls{setPercent: debug.SetGCPercent, setLimit: debug.SetMemoryLimit,
		heapBytes: heapObjectBytes, cgroupMax: cgroupMemoryMax, gogcSet: gogc}
}

// startHeapHold is the heap the hold allows: startHeapCap, or less under a memory limit
// (limit, math.MaxInt64 for none) or a cgroup limit (cgroup, 0 for none), half of which
// still leaves room for what the process has besides its heap.
func startHeapHold(limit, cgroup int64) int64 {
	hold := min(startHeapCap, limit)
	if cgroup > 0 {
		hold = min(hold, cgroup/2)
	}
	return hold
}

// startHoldTaken says a start of this process has held the collector: only the first does,
// since the runtime's knobs are the process's (a test process starts many servers) and a second
// hold would take the first one's settings for Go's.
var startHoldTaken atomic.Bool

// holdCollectorForStart is holdCollector on the process's runtime, for its first start; later
// starts hold nothing.
func holdCollectorForStart(log *slog.Logger) *collectorHold {
	if startHoldTaken.Swap(true) {
		return &collectorHold{}
	}
	return holdCollector(realCollector(), log)
}

// holdCollector turns the collector off under a memory limit of startHeapHold, unless GOGC
// is set, until release is called, the heap passes half that limit, or startHoldMost has
// passed.
func holdCollector(rt collectorControls, log *slog.Logger) *collectorHold {
	h := &collectorHold{runtime: rt, log: log}
	if rt.gogcSet {
		return h
	}
	h.done = make(chan struct{})
	h.limit = rt.setLimit(-1) // reads it
	hold := startHeapHold(h.limit, rt.cgroupMax())
	h.percent = rt.setPercent(-1)
	rt.setLimit(hold)
	go h.watch(hold / 2)
	return h
}

// watch ends the hold once the heap reaches most, or after startHoldMost.
func (h *collectorHold) watch(most int64) {
	tick := time.NewTicker(startHoldPoll)
	defer tick.Stop()
	deadline := time.After(startHoldMost)
	for {
		select {
		case <-h.done:
			return
		case <-deadline:
			h.release("its time passed")
			return
		case <-tick.C:
			if h.runtime.heapBytes() >= most {
				h.release("the heap reached " + strconv.FormatInt(most>>20, 10) + " MiB")
				return
			}
		}
	}
}

// release gives Go's pacing and memory limit back, once; why says what ended the hold.
func (h *collectorHold) release(why string) {
	if !h.holding() {
		return
	}
	h.once.Do(func() {
		h.runtime.setPercent(h.percent)
		h.runtime.setLimit(h.limit)
		close(h.done)
		h.log.Info("garbage collector's start-up hold ended", "because", why, "heap_mib", h.runtime.heapBytes()>>20,
			"since_start", time.Since(processStarted).Round(time.Millisecond))
	})
}

// heapObjectBytes is the heap's objects, live or garbage, as the runtime counts them.
func heapObjectBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return math.MaxInt64 // not told: end the hold
	}
	return int64(min(s[0].Value.Uint64(), math.MaxInt64))
}

// cgroupMemoryMax is the memory limit of the process's cgroup (v2, else v1), 0 if none or
// unknown.
func cgroupMemoryMax() int64 {
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v <= 0 || v >= math.MaxInt64/2 { // "max", or v1's "no limit" (a page-rounded MaxInt64)
			return 0
		}
		return v
	}
	return 0
}
