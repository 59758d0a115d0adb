package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// TestTheAdminsPasswordIsStoredAfterTheFirstBind: the argon2id hash of the local admin's
// password waits for the scheduler's first bind (it took a quarter of Arbiter's CPU while the
// informers listed a 10,000-pod backlog), a failed store is tried again, and sign-in is let in
// (ready closed) only once it is stored.
func TestTheAdminsPasswordIsStoredAfterTheFirstBind(t *testing.T) {
	t.Parallel()
	bound := make(chan struct{})
	var saves atomic.Int32
	save := func(context.Context) error {
		if saves.Add(1) == 1 {
			return errors.New("the database is restarting")
		}
		return nil
	}
	ready := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := func(ctx context.Context) {
		select {
		case <-bound:
		case <-ctx.Done():
		}
	}
	go bootstrapAdmin(ctx, wait, save, ready, slog.New(slog.NewTextHandler(io.Discard, nil)))
	select {
	case <-ready:
		t.Fatal("the password was stored before the first bind")
	case <-time.After(200 * time.Millisecond):
	}
	if n := saves.Load(); n != 0 {
		t.Fatalf("%d stores of the password before the first bind, want 0", n)
	}
	close(bound)
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("sign-in was never let in")
	}
	if n := saves.Load(); n != 2 {
		t.Fatalf("%d stores of the password, want 2 (one failed, tried again)", n)
	}
}

// TestFirstBindWithoutASchedulerWaitsForNothing: a server with no cluster stores the
// password at once.
func TestFirstBindWithoutASchedulerWaitsForNothing(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	go func() { firstBind(nil)(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("firstBind(nil) waited")
	}
}
