package store_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/jackc/pgx/v5/pgxpool"
)

// With the database stalled (it accepts connections and reads, but never answers), every
// kind of store call fails with ErrUnavailable after the store's timeout instead of hanging,
// and all of them work again soon after the database answers, without a new pool.
func TestStalledDatabaseFailsCallsInsteadOfHanging(t *testing.T) {
	t.Parallel()
	stall := testdb.Stall(t, testdb.NewURL(t))
	cfg, err := pgxpool.ParseConfig(stall.URL)
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 500 * time.Millisecond
	cfg.ConnConfig.ConnectTimeout = timeout
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.NewWithTimeout(pool, timeout)
	sessions := st.Sessions(0)
	ctx := context.Background()

	calls := map[string]func() error{
		"Ping": func() error { return st.Ping(ctx) },
		"Priorities (a query)": func() error {
			_, err := st.Priorities(ctx, listquery.Query{SortBy: "value"})
			return err
		},
		"ReserveLoginAttempt (a transaction with row locks)": func() error {
			_, err := st.ReserveLoginAttempt(ctx, []string{"user:x"}, func(int) time.Duration { return 0 })
			return err
		},
		"ClearLoginFailures (an exec)": func() error { return st.ClearLoginFailures(ctx, []string{"user:x"}) },
		"OrganizationSnapshot (a read-only transaction)": func() error {
			_, err := st.OrganizationSnapshot(ctx)
			return err
		},
		"session FindCtx": func() error {
			_, _, err := sessions.FindCtx(ctx, "no-such-token")
			return err
		},
		"session CommitCtx": func() error {
			return sessions.CommitCtx(ctx, "token", []byte("data"), time.Now().Add(time.Hour))
		},
	}
	// A batch with a row the database refuses: that row is skipped when the database answers,
	// never because it does not (the whole batch then fails, to be sent again).
	var skipped atomic.Int32
	st.OnRecordSkipped(func(string, string, error) { skipped.Add(1) })
	calls["RecordWorkloads (a batch with a row refused)"] = func() error {
		ok := store.WorkloadRecord{UID: "ok", Namespace: "ns", Name: "ok", Kind: "Job", Phase: "Pending", QueuedAt: time.Now()}
		bad := ok
		bad.UID, bad.Phase = "bad", "Bogus"
		return st.RecordWorkloads(ctx, []store.WorkloadRecord{ok, bad}, nil)
	}
	for name, call := range calls {
		if err := call(); err != nil {
			t.Fatalf("%s before the stall: %v", name, err)
		}
	}

	stall.Freeze()
	defer func(before int32) {
		if n := skipped.Load() - before; n != 1 {
			t.Errorf("%d rows skipped after the stall began, want 1 (once the database answers again)", n)
		}
	}(skipped.Load())
	for name, call := range calls {
		began := time.Now()
		errc := make(chan error, 1)
		go func() { errc <- call() }()
		select {
		case err := <-errc:
			if !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("%s with the database stalled: %v, want ErrUnavailable", name, err)
			}
			t.Logf("%s failed after %s", name, time.Since(began).Round(time.Millisecond))
		case <-time.After(15 * time.Second):
			t.Fatalf("%s still hangs 15 s into the stall (timeout %s)", name, timeout)
		}
	}

	// A configuration listener started during the stall keeps trying, and listens soon after.
	listenCtx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	listening := st.FollowConfigChanges(listenCtx, store.ListenOptions{Retry: 100 * time.Millisecond, MaxRetry: time.Second, Log: slog.New(slog.DiscardHandler)})

	stall.Thaw()
	thawed := time.Now()
	defer func() {
		t.Logf("all calls answered again %s after the stall", time.Since(thawed).Round(time.Millisecond))
	}()
	for name, call := range calls {
		poll.UntilNil(t, name+" answers again after the stall ended", 15*time.Second, call)
	}
	select {
	case <-listening:
	case <-time.After(15 * time.Second):
		t.Fatal("the configuration listener started during the stall is still not listening 15 s after it")
	}
}
