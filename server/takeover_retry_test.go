package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
)

// A frozen leader can hold a workload's row locked in a transaction it will never finish in
// time: the next leader's takeover then cannot write that workload's record before its
// database deadline. It must not give up for the term: it tries again until the record is
// written (here, once the lock holder rolls back), or the term ends.
func TestTakeoverTriesAgainWhatTheDatabaseRefusedFirst(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	st := store.NewWithTimeout(pool, 300*time.Millisecond)
	term, end := context.WithCancel(context.Background())
	defer end()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	finished := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	w := kube.FinishedWorkload{UID: "uid-frozen", Namespace: "ns", Name: "job", Kind: "Job", Gang: 1, RequestedGPUs: 1,
		QueuedAt: finished.Add(-time.Hour), FinishedAt: finished}

	// The frozen leader's transaction: the same workload's row, inserted and not committed.
	lock, err := pool.Begin(term)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(term, `INSERT INTO workloads (uid, namespace, name, kind, phase, queued_at) VALUES ('uid-frozen', 'ns', 'job', 'Job', 'Running', now())`); err != nil {
		t.Fatal(err)
	}
	reconcile := func(ctx context.Context) error {
		_, err := recordFinished(ctx, []kube.FinishedWorkload{w}, st, func() bool { return true })
		return err
	}
	if err := reconcile(term); err == nil {
		t.Fatal("the record was written under another transaction's lock")
	}
	go keepTakingOver(term, 100*time.Millisecond, reconcile, func() bool { return true }, log)
	time.Sleep(time.Second) // the lock holder stays frozen a while: the retries meet the lock
	if err := lock.Rollback(term); err != nil {
		t.Fatal(err)
	}
	poll.UntilNil(t, "the finished workload is recorded once the lock is gone", 30*time.Second, func() error {
		r, err := st.WorkloadRecord(term, "uid-frozen")
		if err != nil {
			return err
		}
		if r.Phase != "Completed" {
			return fmt.Errorf("recorded %s", r.Phase)
		}
		return nil
	})
}
