package web_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arbiterhq/arbiter/internal/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
)

// TestWorkloadTypeListFollowsChangesOnEveryReplica: the cached type list changes at once on the
// replica that made a change, and on another replica as soon as it hears the NOTIFY.
func TestWorkloadTypeListFollowsChangesOnEveryReplica(t *testing.T) {
	t.Parallel()
	url := testdb.NewURL(t)
	replica := func() (*httptest.Server, *store.Store) {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		st := store.New(pool)
		srv := httptest.NewServer(web.New(deps(st)))
		t.Cleanup(srv.Close)
		signIn(srv, newAPIKey(t, st, "admin", "system", ""))
		return srv, st
	}
	a, _ := replica()
	b, stB := replica()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = stB.ListenConfigChanges(ctx, stB.ConfigChanged) }()

	const path = "/api/v1/workload-types?filterBy=name==TFJob"
	effective := func(srv *httptest.Server) any {
		return items(getJSON(t, srv, path), "types")[0]["effectivePriorityName"]
	}
	if effective(a) != "low" || effective(b) != "low" {
		t.Fatalf("TFJob starts at %v / %v, want low on both", effective(a), effective(b))
	}
	tfjob := "/api/v1/workload-types/" + store.SeedID("workload-type", "kubeflow.org/TFJob").String()
	if r := do(t, a, "PUT", tfjob, "application/json", `{"priorityId":"`+store.SeedID("priority", "very-high").String()+`"}`); r.status != 200 {
		t.Fatalf("PUT = %d %s", r.status, r.body)
	}
	if got := effective(a); got != "very-high" {
		t.Errorf("the replica that made the change still lists %v", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for effective(b) != "very-high" {
		if time.Now().After(deadline) {
			t.Fatal("the other replica never heard the change")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
