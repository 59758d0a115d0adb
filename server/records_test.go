package server

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// A leader whose renewal is late for a moment writes its records once it is fresh again:
// the batch waits, it is not dropped.
func TestRecorderKeepsItsBatchWhileNotActing(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := newRecorder(ctx, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
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
