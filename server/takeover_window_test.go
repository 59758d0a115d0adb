package server

import (
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/scheduler/lifecycle"
)

// A Job bound by a leader that stopped before recording it, whose last pod ends after the next
// leader's takeover has read the cluster and before that leader's first cycle: the takeover
// found it still running, the first cycle no longer did, so neither recorded it. Once the
// first cycle's records are written, the finished workloads are read again and it is recorded,
// Completed; a workload the first cycle recorded running is left as that cycle wrote it. The
// first cycle may also change nothing at all.
func TestFinishedBetweenTakeoverAndFirstCycleIsRecorded(t *testing.T) {
	for _, firstCycle := range []string{"records a running workload", "changes nothing"} {
		t.Run(firstCycle, func(t *testing.T) {
			t.Parallel()
			r, st, term := recorderOnNewDatabase(t)
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			r.interval = 10 * time.Millisecond
			go r.run(term)
			may := func() bool { return true }

			// What the cluster shows as finished, as the takeover and the later pass read it.
			var finished atomic.Pointer[[]kube.FinishedWorkload]
			finished.Store(&[]kube.FinishedWorkload{})
			read := func() []kube.FinishedWorkload { return *finished.Load() }

			if n, err := recordFinished(term, read(), st, may); err != nil || n != 0 {
				t.Fatalf("the takeover recorded %d, %v; want nothing finished yet", n, err)
			}
			go recordFinishedAfterFirstCycle(term, r.firstWritten, read, map[string]bool{}, st, may, log)
			ended := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			finished.Store(&[]kube.FinishedWorkload{{UID: "uid-window", Namespace: "ns", Name: "feed", Kind: "Job", Group: "batch",
				Gang: 1, RequestedGPUs: 1, QueuedAt: ended.Add(-time.Minute), StartedAt: ended.Add(-30 * time.Second), FinishedAt: ended}})
			select {
			case <-r.firstWritten:
				t.Fatal("firstWritten closed before any cycle was observed")
			default:
			}

			var change lifecycle.Change
			if firstCycle == "records a running workload" {
				started := ended
				change.Records = []lifecycle.Record{{UID: "uid-running", Namespace: "ns", Name: "train", Kind: "Job",
					Phase: scheduler.PhaseRunning, QueuedAt: ended, StartedAt: &started}}
			}
			r.take(change)

			poll.UntilNil(t, "the Job that finished before the first cycle is recorded", 30*time.Second, func() error {
				rec, err := st.WorkloadRecord(term, "uid-window")
				if err != nil {
					return err
				}
				if rec.Phase != string(scheduler.PhaseCompleted) {
					return fmt.Errorf("recorded %s, want Completed", rec.Phase)
				}
				return nil
			})
			if change.Records != nil {
				rec, err := st.WorkloadRecord(term, "uid-running")
				if err != nil || rec.Phase != string(scheduler.PhaseRunning) {
					t.Errorf("the first cycle's running workload: record %+v, %v; want it Running, as the cycle wrote it", rec, err)
				}
			}
		})
	}
}
