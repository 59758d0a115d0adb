package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
)

// replicas starts n web servers on one database, each with its own pool and store, as
// separate Arbiter processes would be.
func replicas(t *testing.T, n int) ([]*httptest.Server, []*store.Store) {
	t.Helper()
	url := testdb.NewURL(t)
	var srvs []*httptest.Server
	var sts []*store.Store
	for range n {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		st := store.New(pool)
		srv := httptest.NewServer(web.New(deps(st)))
		t.Cleanup(srv.Close)
		signIn(srv, newAPIKey(t, st, "admin", "system", ""))
		srvs, sts = append(srvs, srv), append(sts, st)
	}
	return srvs, sts
}

// follow starts st's configuration listener and waits until it listens.
func follow(t *testing.T, st *store.Store, o store.ListenOptions) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	select {
	case <-st.FollowConfigChanges(ctx, o):
	case <-time.After(10 * time.Second):
		t.Fatal("the configuration listener did not start listening")
	}
}

const tfjobTypes = "/api/v1/workload-types?filterBy=name==TFJob"

func tfjobPriority(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	return list[views.WorkloadTypeAnswer](t, srv, tfjobTypes, "types")[0].EffectivePriorityName
}

func setTFJobPriority(t *testing.T, srv *httptest.Server, priority string) {
	t.Helper()
	tfjob := "/api/v1/workload-types/" + store.SeedID("workload-type", "kubeflow.org/TFJob").String()
	if r := do(t, srv, "PUT", tfjob, "application/json", `{"priorityId":"`+store.SeedID("priority", priority).String()+`"}`); r.status != 200 {
		t.Fatalf("PUT = %d %s", r.status, r.body)
	}
}

// tfjobPriorityIs is the condition that srv lists TFJob at the priority want, saying what it
// lists instead.
func tfjobPriorityIs(t *testing.T, srv *httptest.Server, want string) func() error {
	return func() error {
		if got := tfjobPriority(t, srv); got != want {
			return fmt.Errorf("TFJob listed at %s", got)
		}
		return nil
	}
}

// TestWorkloadTypeListFollowsChangesOnEveryReplica: the cached type list changes at once on the
// replica that made a change, and on another replica as soon as it hears the NOTIFY.
func TestWorkloadTypeListFollowsChangesOnEveryReplica(t *testing.T) {
	t.Parallel()
	srvs, sts := replicas(t, 2)
	a, b := srvs[0], srvs[1]
	follow(t, sts[1], store.ListenOptions{})

	if tfjobPriority(t, a) != "low" || tfjobPriority(t, b) != "low" {
		t.Fatalf("TFJob starts at %v / %v, want low on both", tfjobPriority(t, a), tfjobPriority(t, b))
	}
	setTFJobPriority(t, a, "very-high")
	if got := tfjobPriority(t, a); got != "very-high" {
		t.Errorf("the replica that made the change still lists %v", got)
	}
	poll.UntilNil(t, "the other replica lists TFJob at very-high", 10*time.Second, tfjobPriorityIs(t, b, "very-high"))
}

// TestConfigListenerReloadsWhatItMissedWhileDisconnected: a NOTIFY sent while a replica's
// listening connection is down is lost; on reconnecting the replica reloads everything, so it
// serves the change made meanwhile within seconds.
func TestConfigListenerReloadsWhatItMissedWhileDisconnected(t *testing.T) {
	t.Parallel()
	srvs, sts := replicas(t, 2)
	a, b := srvs[0], srvs[1]
	// A 2 s pause before reconnecting leaves room to make the change while b is not listening.
	follow(t, sts[1], store.ListenOptions{Retry: 2 * time.Second, MaxRetry: 2 * time.Second})
	pool := sts[0].Pool()
	ctx := context.Background()
	listenerPID := func() (pid int32) {
		_ = pool.QueryRow(ctx, `SELECT coalesce(max(pid), 0) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN '||$1`, store.ConfigChannel).Scan(&pid)
		return pid
	}
	_ = tfjobPriority(t, b) // b caches the list before it misses the change

	// A busy machine may take longer than the pause to make the change; then the round proves
	// nothing (b would hear the NOTIFY) and is tried again.
	for round, priority := range []string{"very-high", "high", "medium"} {
		poll.Until(t, "the listener's backend shows in pg_stat_activity", 10*time.Second, func() bool { return listenerPID() != 0 })
		var terminated bool
		if err := pool.QueryRow(ctx, "SELECT pg_terminate_backend($1)", listenerPID()).Scan(&terminated); err != nil || !terminated {
			t.Fatalf("pg_terminate_backend: %v %v", terminated, err)
		}
		poll.Until(t, "the listener's backend is gone", 10*time.Second, func() bool { return listenerPID() == 0 })
		setTFJobPriority(t, a, priority)
		missed := listenerPID() == 0
		poll.UntilNil(t, "the replica reloads the change it missed while disconnected, TFJob at "+priority, 10*time.Second, tfjobPriorityIs(t, b, priority))
		if missed {
			return
		}
		t.Logf("round %d: the listener was back before the change was made; trying again", round)
	}
	t.Fatal("the change was never made while the listener was disconnected")
}
