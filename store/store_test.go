package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"k8s.io/utils/ptr"
)

func TestMain(m *testing.M) { testdb.Main(m) }

var operator = store.Actor{Subject: "alice", SubjectType: "user", SourceIP: "127.0.0.1", RequestID: "req-1", HTTPMethod: "PUT"}

func TestSeededRowsHaveStableIDs(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()

	prios, err := st.Priorities(ctx, listquery.Query{SortBy: "value"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"very-low": 25, "low": 40, "medium-low": 65, "medium": 80, "medium-high": 90, "high": 125, "very-high": 150}
	if len(prios) != len(want) {
		t.Fatalf("got %d priorities, want %d", len(prios), len(want))
	}
	for _, p := range prios {
		if want[p.Name] != p.Value {
			t.Errorf("priority %s = %d, want %d", p.Name, p.Value, want[p.Name])
		}
		if p.ID != store.SeedID("priority", p.Name) {
			t.Errorf("priority %s has id %s, want the seed id %s", p.Name, p.ID, store.SeedID("priority", p.Name))
		}
	}

	cats, err := st.Categories(ctx, listquery.Query{SortBy: "name"})
	if err != nil {
		t.Fatal(err)
	}
	wantCats := map[string][2]string{"Build": {"high", "non-preemptible"}, "Train": {"low", "preemptible"}, "Deploy": {"very-high", "non-preemptible"}}
	for _, c := range cats {
		if got := [2]string{c.DefaultPriorityName, c.DefaultPreemptibility}; got != wantCats[c.Name] {
			t.Errorf("category %s defaults = %v, want %v", c.Name, got, wantCats[c.Name])
		}
		if c.ID != store.SeedID("category", c.Name) {
			t.Errorf("category %s id %s is not its seed id", c.Name, c.ID)
		}
	}

	types, err := st.WorkloadTypes(ctx, listquery.Query{SortBy: "name"}, false)
	if err != nil {
		t.Fatal(err)
	}
	native, external := 0, 0
	for _, wt := range types {
		if wt.External {
			external++
		} else {
			native++
		}
		if wt.ID != store.SeedID("workload-type", wt.Group+"/"+wt.Name) {
			t.Errorf("type %s/%s id %s is not its seed id", wt.Group, wt.Name, wt.ID)
		}
	}
	if native != 7 || external != 30 {
		t.Errorf("got %d native and %d external types, want 7 and 30", native, external)
	}
}

func TestWorkloadTypeEffectiveValuesFollowCategoryUntilOverridden(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	pytorch := store.SeedID("workload-type", "kubeflow.org/PyTorchJob")
	spot := store.SeedID("workload-type", "run.ai/SPOTRequest")

	wt, err := st.WorkloadType(ctx, pytorch)
	if err != nil {
		t.Fatal(err)
	}
	if wt.EffectivePriorityName != "low" || wt.EffectivePreemptibility != "preemptible" || wt.PriorityID != nil {
		t.Fatalf("PyTorchJob starts as %s/%s (own priority %v), want the Train defaults low/preemptible", wt.EffectivePriorityName, wt.EffectivePreemptibility, wt.PriorityID)
	}
	sp, err := st.WorkloadType(ctx, spot)
	if err != nil {
		t.Fatal(err)
	}
	if sp.CategoryID != nil || sp.EffectivePriorityName != "low" || sp.EffectivePreemptibility != "preemptible" {
		t.Fatalf("SPOTRequest has no category and the cluster default low/preemptible; got %v %s/%s", sp.CategoryName, sp.EffectivePriorityName, sp.EffectivePreemptibility)
	}

	high := store.SeedID("priority", "high")
	wt, err = st.UpdateWorkloadType(ctx, pytorch, store.WorkloadTypeUpdate{
		PriorityID:     store.Optional[uuid.UUID]{Set: true, Value: &high},
		Preemptibility: store.Optional[string]{Set: true, Value: ptr.To("non-preemptible")},
	}, operator)
	if err != nil {
		t.Fatal(err)
	}
	if wt.EffectivePriorityName != "high" || wt.EffectivePreemptibility != "non-preemptible" || wt.UpdatedBy != "alice" {
		t.Fatalf("after the override PyTorchJob is %s/%s by %s, want high/non-preemptible by alice", wt.EffectivePriorityName, wt.EffectivePreemptibility, wt.UpdatedBy)
	}

	// A category change moves a type that follows its category; null returns to the default.
	wt, err = st.UpdateWorkloadType(ctx, pytorch, store.WorkloadTypeUpdate{
		PriorityID: store.Optional[uuid.UUID]{Set: true},
		CategoryID: store.Optional[uuid.UUID]{Set: true, Value: ptr.To(store.SeedID("category", "Deploy"))},
	}, operator)
	if err != nil {
		t.Fatal(err)
	}
	if wt.PriorityID != nil || wt.EffectivePriorityName != "very-high" || wt.Preemptibility == nil {
		t.Fatalf("got priority %v effective %s preemptibility %v; want priority back to Deploy's very-high and preemptibility kept", wt.PriorityID, wt.EffectivePriorityName, wt.Preemptibility)
	}

	entries, err := st.AuditEntries(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("want one audit row per change, got %d", len(entries))
	}
	last := entries[0]
	if last.Subject != "alice" || last.EntityName != "PyTorchJob" || last.EntityType != "workload-type" || last.Result != "success" {
		t.Errorf("audit row = %+v", last)
	}
	if _, ok := last.Changes["priority"]; !ok {
		t.Errorf("audit row records no priority change: %v", last.Changes)
	}
	if _, ok := last.Changes["category"]; !ok {
		t.Errorf("audit row records no category change: %v", last.Changes)
	}
	if _, ok := last.Changes["preemptibility"]; ok {
		t.Errorf("audit row records an unchanged field: %v", last.Changes)
	}
}

func TestUpdateWorkloadTypeRejectsBadInputAndWritesNothing(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	job := store.SeedID("workload-type", "batch/Job")
	missing := uuid.New()

	cases := []struct {
		name string
		id   uuid.UUID
		u    store.WorkloadTypeUpdate
		kind error
	}{
		{"unknown type", missing, store.WorkloadTypeUpdate{}, store.ErrNotFound},
		{"unknown priority", job, store.WorkloadTypeUpdate{PriorityID: store.Optional[uuid.UUID]{Set: true, Value: &missing}}, store.ErrInvalid},
		{"unknown category", job, store.WorkloadTypeUpdate{CategoryID: store.Optional[uuid.UUID]{Set: true, Value: &missing}}, store.ErrInvalid},
		{"bad preemptibility", job, store.WorkloadTypeUpdate{Preemptibility: store.Optional[string]{Set: true, Value: ptr.To("sometimes")}}, store.ErrInvalid},
	}
	for _, tc := range cases {
		_, err := st.UpdateWorkloadType(ctx, tc.id, tc.u, operator)
		if !errors.Is(err, tc.kind) {
			t.Errorf("%s: got %v, want kind %v", tc.name, err, tc.kind)
		}
	}
	entries, err := st.AuditEntries(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("refused changes wrote %d audit rows in their transaction; want none", len(entries))
	}
	wt, err := st.WorkloadType(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if wt.UpdatedBy != "system" {
		t.Errorf("Job was changed by a refused update: updated by %s", wt.UpdatedBy)
	}
}

func TestUpdateCategoryMovesTypesThatFollowIt(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	train := store.SeedID("category", "Train")
	medium := store.SeedID("priority", "medium")
	cat, err := st.UpdateCategory(ctx, train, store.CategoryUpdate{DefaultPriorityID: &medium}, operator)
	if err != nil {
		t.Fatal(err)
	}
	if cat.DefaultPriorityName != "medium" || cat.DefaultPreemptibility != "preemptible" {
		t.Fatalf("Train is now %s/%s", cat.DefaultPriorityName, cat.DefaultPreemptibility)
	}
	wt, err := st.WorkloadType(ctx, store.SeedID("workload-type", "kubeflow.org/TFJob"))
	if err != nil {
		t.Fatal(err)
	}
	if wt.EffectivePriorityName != "medium" {
		t.Errorf("TFJob follows Train, so its effective priority should be medium, got %s", wt.EffectivePriorityName)
	}
}

func TestConfigChangeNotifiesListeners(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	st := store.New(pool)
	ctx := context.Background()
	heard := make(chan string, 1)
	st.OnConfigChange(func(agg string) { heard <- agg })

	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+store.ConfigChannel); err != nil {
		t.Fatal(err)
	}
	low := store.SeedID("priority", "low")
	if _, err := st.UpdateWorkloadType(ctx, store.SeedID("workload-type", "batch/Job"), store.WorkloadTypeUpdate{PriorityID: store.Optional[uuid.UUID]{Set: true, Value: &low}}, operator); err != nil {
		t.Fatal(err)
	}
	if got := <-heard; got != "workload_types" {
		t.Errorf("in-process hook heard %q", got)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := conn.Conn().WaitForNotification(waitCtx)
	if err != nil {
		t.Fatal(err)
	}
	if n.Channel != store.ConfigChannel || n.Payload != "workload_types" {
		t.Errorf("notification %s %q", n.Channel, n.Payload)
	}
}

// TestConfigListenerSurvivesQuietSpells: with nothing to hear, the listener checks its
// connection every Check and keeps listening; a change made by another replica after several
// checks still reaches the hooks, and the first thing the hooks hear is the reload-everything
// that follows establishing LISTEN.
func TestConfigListenerSurvivesQuietSpells(t *testing.T) {
	t.Parallel()
	url := testdb.NewURL(t)
	open := func() *store.Store {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		return store.New(pool)
	}
	here, other := open(), open()
	heard := make(chan string, 16)
	here.OnConfigChange(func(agg string) { heard <- agg })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	select {
	case <-here.FollowConfigChanges(ctx, store.ListenOptions{Check: 50 * time.Millisecond}):
	case <-time.After(10 * time.Second):
		t.Fatal("the listener did not start listening")
	}
	if got := <-heard; got != store.AllAggregates {
		t.Fatalf("first heard %q, want %q (reload everything once listening)", got, store.AllAggregates)
	}
	// A quiet spell is the point: time passes with nothing to hear, long enough for several
	// liveness checks (every 50 ms), before the change is made.
	time.Sleep(300 * time.Millisecond)
	low := store.SeedID("priority", "low")
	if _, err := other.UpdateWorkloadType(ctx, store.SeedID("workload-type", "batch/Job"), store.WorkloadTypeUpdate{PriorityID: store.Optional[uuid.UUID]{Set: true, Value: &low}}, operator); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-heard:
		if got != "workload_types" {
			t.Errorf("heard %q, want workload_types", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the change made on the other replica was never heard")
	}
}

// S26: semi-preemptible is a third value for a category's default and a type's own setting.
func TestSemiPreemptibleCategoriesAndTypes(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	semi := store.SemiPreemptible
	cat, err := st.UpdateCategory(ctx, store.SeedID("category", "Train"), store.CategoryUpdate{DefaultPreemptibility: &semi}, operator)
	if err != nil {
		t.Fatal(err)
	}
	if cat.DefaultPreemptibility != semi {
		t.Fatalf("Train defaults to %s, want %s", cat.DefaultPreemptibility, semi)
	}
	wt, err := st.UpdateWorkloadType(ctx, store.SeedID("workload-type", "batch/Job"), store.WorkloadTypeUpdate{
		Preemptibility: store.Optional[string]{Set: true, Value: ptr.To(semi)},
	}, operator)
	if err != nil {
		t.Fatal(err)
	}
	if wt.EffectivePreemptibility != semi {
		t.Fatalf("Job is %s, want %s", wt.EffectivePreemptibility, semi)
	}
	if err := store.CheckPreemptibility("semi"); err == nil {
		t.Fatal("a value that is none of the three is accepted")
	}
}
