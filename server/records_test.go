package server

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/lifecycle"
	"github.com/arbiterhq/arbiter/store"
)

// recorderOnNewDatabase is a recorder on a database of its own, and the context its test runs
// under (a minute).
func recorderOnNewDatabase(t *testing.T) (*recorder, *store.Store, context.Context) {
	t.Helper()
	st := store.New(testdb.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	r, err := newRecorder(ctx, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return r, st, ctx
}

// A leader whose renewal is late for a moment writes its records once it is fresh again:
// the batch waits, it is not dropped.
func TestRecorderKeepsItsBatchWhileNotActing(t *testing.T) {
	t.Parallel()
	r, st, ctx := recorderOnNewDatabase(t)
	acting := false
	r.acting = func() bool { return acting }
	now := time.Now()
	r.pending["uid-1"] = store.WorkloadRecord{UID: "uid-1", Namespace: "ns", Name: "job-1", Kind: "Job", Phase: "Running", QueuedAt: now, StartedAt: &now}

	r.flush(ctx)
	if _, err := st.WorkloadRecord(ctx, "uid-1"); err == nil {
		t.Fatal("written while not acting")
	}
	acting = true
	r.flush(ctx)
	if rec, err := st.WorkloadRecord(ctx, "uid-1"); err != nil || rec.Phase != "Running" {
		t.Fatalf("once acting again: record %+v, %v", rec, err)
	}
}

// A Job stopped by its owner and run again before the writer's next batch ends Running: the
// record of the later cycle supersedes the stop of the earlier one in the same batch.
func TestRecorderStopThenRunAgainInOneBatch(t *testing.T) {
	t.Parallel()
	r, st, ctx := recorderOnNewDatabase(t)
	now := time.Now()
	running := lifecycle.Record{UID: "uid-1", Namespace: "ns", Name: "job-1", Kind: "Job", Phase: scheduler.PhaseRunning, QueuedAt: now, StartedAt: &now}
	r.merge(lifecycle.Change{Records: []lifecycle.Record{running}})
	r.flush(ctx)

	// Stopped, then run again: both cycles in one batch.
	r.merge(lifecycle.Change{Stopped: []string{"uid-1"}})
	r.merge(lifecycle.Change{Records: []lifecycle.Record{running}})
	r.flush(ctx)
	if rec, err := st.WorkloadRecord(ctx, "uid-1"); err != nil || rec.Phase != "Running" {
		t.Fatalf("run again after a stop: record %+v, %v", rec, err)
	}
	// Stopped alone: Suspended, nothing allocated.
	r.merge(lifecycle.Change{Stopped: []string{"uid-1"}})
	r.flush(ctx)
	if rec, err := st.WorkloadRecord(ctx, "uid-1"); err != nil || rec.Phase != "Suspended" || rec.AllocatedGPUs != 0 || rec.FinishedAt != nil {
		t.Fatalf("stopped: record %+v, %v", rec, err)
	}
}

// One workload whose text the database would refuse (a submitter of 3.2 KB, too large for its
// index; a NUL) does not stop the recording of the others, and is not sent again forever.
func TestOneWorkloadCannotStopTheRecorder(t *testing.T) {
	t.Parallel()
	r, st, ctx := recorderOnNewDatabase(t)
	now := time.Now()
	rec := func(uid string) lifecycle.Record {
		return lifecycle.Record{UID: uid, Namespace: "ns", Name: uid, Kind: "Job", Phase: scheduler.PhasePending, QueuedAt: now}
	}
	long, nul := rec("long"), rec("nul")
	long.Submitter = strings.Repeat("a", 3200)
	nul.Submitter = "ann\x00"
	nul.Message = "waits\x00"
	r.merge(lifecycle.Change{Records: []lifecycle.Record{rec("ok-1"), long, nul, rec("ok-2")},
		Events: []lifecycle.Event{{Workload: "nul", At: now, Kind: "Queued", Message: "queued\x00"}}})
	r.flush(ctx)
	for _, uid := range []string{"ok-1", "ok-2", "long", "nul"} {
		if _, err := st.WorkloadRecord(ctx, uid); err != nil {
			t.Errorf("record %s not written: %v", uid, err)
		}
	}
	if evs, err := st.WorkloadEvents(ctx, "nul"); err != nil || len(evs) != 1 {
		t.Errorf("nul's events: %d, %v", len(evs), err)
	}
	if len(r.pending)+len(r.events) != 0 {
		t.Errorf("%d records and %d events kept to be sent again", len(r.pending), len(r.events))
	}
}

// A cycle that changes nothing writes nothing, and so does not make the next change wait out
// the interval: with an hour between writes, the first cycle of a term on an empty cluster
// (which still marks the term's first records written) must not hold the first Job's record
// back for an hour.
func TestRecorderNothingToWriteStartsNoInterval(t *testing.T) {
	t.Parallel()
	r, st, ctx := recorderOnNewDatabase(t)
	r.interval = time.Hour
	go r.run(ctx)
	r.take(lifecycle.Change{}) // the term's first cycle, on an empty cluster
	select {
	case <-r.firstWritten:
	case <-ctx.Done():
		t.Fatal("the first cycle, with nothing to write, never counted as written")
	}
	now := time.Now()
	r.take(lifecycle.Change{Records: []lifecycle.Record{{UID: "uid-1", Namespace: "ns", Name: "job-1", Kind: "Job",
		Phase: scheduler.PhaseRunning, QueuedAt: now, StartedAt: &now}}})
	poll.UntilNil(t, "the first Job's record is written", 10*time.Second, func() error {
		_, err := st.WorkloadRecord(ctx, "uid-1")
		return err
	})
}
