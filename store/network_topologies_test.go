package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

var rackLevels = []string{"topology.arbiter.dev/block", "topology.arbiter.dev/rack", "kubernetes.io/hostname"}

// TestNetworkTopologyIsTheTopologyOfThePoolsThatReferToIt: a pool given a topology answers
// its name; the topology lists the pool; it cannot be deleted while the pool refers to it, and
// can once the pool has none.
func TestNetworkTopologyIsTheTopologyOfThePoolsThatReferToIt(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	topo, err := st.CreateNetworkTopology(ctx, "racks", rackLevels, system)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := st.CreateNodePool(ctx, store.NodePoolUpdate{Name: set("a100"), LabelKey: set(store.NodePoolLabelKey),
		NetworkTopology: set(topo.ID)}, system)
	if err != nil {
		t.Fatal(err)
	}
	if pool.NetworkTopologyID == nil || *pool.NetworkTopologyID != topo.ID || pool.NetworkTopologyName == nil || *pool.NetworkTopologyName != "racks" {
		t.Fatalf("pool's topology = %v %v, want racks (%s)", pool.NetworkTopologyID, pool.NetworkTopologyName, topo.ID)
	}
	got, err := st.NetworkTopology(ctx, topo.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := store.NetworkTopology{ID: topo.ID, Name: "racks", Levels: rackLevels, CreatedBy: "test", NodePools: []string{"a100"}}
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(store.NetworkTopology{}, "CreatedAt")); d != "" {
		t.Errorf("topology (-want +got):\n%s", d)
	}
	err = st.DeleteNetworkTopology(ctx, topo.ID, system)
	if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "a100") {
		t.Fatalf("delete of a topology a pool refers to = %v; want a conflict naming the pool", err)
	}
	if _, err := st.UpdateNodePool(ctx, pool.ID, store.NodePoolUpdate{NetworkTopology: store.Optional[uuid.UUID]{Set: true}}, system); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteNetworkTopology(ctx, topo.ID, system); err != nil {
		t.Fatalf("delete of a topology no pool refers to: %v", err)
	}
	if _, err := st.NetworkTopology(ctx, topo.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted topology read back: %v, want not found", err)
	}
}

// TestNetworkTopologyRefusesBadInputNamingTheFieldAndWritesNothing: each bad name or list of
// levels, and a pool given a topology that does not exist, is refused naming its field, and
// nothing is stored.
func TestNetworkTopologyRefusesBadInputNamingTheFieldAndWritesNothing(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	if _, err := st.CreateNetworkTopology(ctx, "taken", rackLevels, system); err != nil {
		t.Fatal(err)
	}
	tooMany := make([]string, store.MaxTopologyLevels+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("level-%d", i)
	}
	cases := []struct {
		name   string
		levels []string
		field  string
		kind   error
	}{
		{"", rackLevels, "name", store.ErrInvalid},
		{"Racks", rackLevels, "name", store.ErrInvalid},
		{"1racks", rackLevels, "name", store.ErrInvalid},
		{strings.Repeat("r", 64), rackLevels, "name", store.ErrInvalid},
		{"taken", rackLevels, "name", store.ErrInvalid},
		{"racks", nil, "levels", store.ErrInvalid},
		{"racks", tooMany, "levels", store.ErrInvalid},
		{"racks", []string{"rack", "rack"}, "levels", store.ErrInvalid},
		{"racks", []string{"not a label"}, "levels", store.ErrInvalid},
		{"racks", []string{"example.com/" + strings.Repeat("a", 60)}, "levels", store.ErrInvalid},
	}
	for _, tc := range cases {
		_, err := st.CreateNetworkTopology(ctx, tc.name, tc.levels, system)
		if !errors.Is(err, tc.kind) || store.FieldOf(err) != tc.field {
			t.Errorf("create %q %q = %v (field %q); want %v naming %s", tc.name, tc.levels, err, store.FieldOf(err), tc.kind, tc.field)
		}
	}
	_, err := st.CreateNodePool(ctx, store.NodePoolUpdate{Name: set("a100"), LabelKey: set(store.NodePoolLabelKey), NetworkTopology: set(uuid.New())}, system)
	if !errors.Is(err, store.ErrInvalid) || store.FieldOf(err) != "networkTopologyId" {
		t.Errorf("pool with an unknown topology = %v (field %q); want invalid networkTopologyId", err, store.FieldOf(err))
	}
	all, err := st.NetworkTopologies(ctx, listquery.Query{})
	if err != nil {
		t.Fatal(err)
	}
	pools, err := st.NodePools(ctx, listquery.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || len(pools) != 1 {
		t.Errorf("after the refusals: %d topologies, %d pools; want 1 (taken) and 1 (default)", len(all), len(pools))
	}
}

// TestParallelTopologyCreatesStopAtTheBound: parallel creates past MaxNetworkTopologies let
// exactly the bound through.
func TestParallelTopologyCreatesStopAtTheBound(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	if _, err := st.Pool().Exec(ctx, `INSERT INTO network_topologies (id, name, levels) SELECT gen_random_uuid(), 'filler-' || i, '{rack}' FROM generate_series(1, $1) i`,
		store.MaxNetworkTopologies-2); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = st.CreateNetworkTopology(ctx, fmt.Sprintf("parallel-%d", i), rackLevels, system)
		}()
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, store.ErrInvalid) || store.FieldOf(err) != "name":
			t.Fatalf("unexpected refusal: %v", err)
		}
	}
	if created != 2 {
		t.Errorf("%d of 6 parallel creates passed with room for 2", created)
	}
}

// TestTopologyDeleteAndPoolReferenceDoNotBothPass: a pool given a topology while the topology
// is deleted, again and again: either the pool refers to it and the delete is refused, or the
// delete passes and the pool's change is refused; never a pool referring to nothing.
func TestTopologyDeleteAndPoolReferenceDoNotBothPass(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	pool, err := st.CreateNodePool(ctx, store.NodePoolUpdate{Name: set("a100"), LabelKey: set(store.NodePoolLabelKey)}, system)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 10 {
		topo, err := st.CreateNetworkTopology(ctx, fmt.Sprintf("round-%d", round), rackLevels, system)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var delErr, refErr error
		wg.Add(2)
		go func() { defer wg.Done(); delErr = st.DeleteNetworkTopology(ctx, topo.ID, system) }()
		go func() {
			defer wg.Done()
			_, refErr = st.UpdateNodePool(ctx, pool.ID, store.NodePoolUpdate{NetworkTopology: set(topo.ID)}, system)
		}()
		wg.Wait()
		if (delErr == nil) == (refErr == nil) {
			t.Fatalf("round %d: delete %v, reference %v; want exactly one to pass", round, delErr, refErr)
		}
		if _, err := st.UpdateNodePool(ctx, pool.ID, store.NodePoolUpdate{NetworkTopology: store.Optional[uuid.UUID]{Set: true}}, system); err != nil {
			t.Fatal(err)
		}
	}
}
