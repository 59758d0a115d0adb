package store_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
)

// The installation's cluster id starts as DefaultClusterID (the migration's seed must be that
// very id, or every Run:ai-shaped answer would change id on upgrade), an admin may set another,
// and the lists' clusterId field follows it.
func TestClusterIDIsSeededSetAndFilteredBy(t *testing.T) {
	st, _, _, alpha := orgFixture(t)
	ctx := context.Background()
	id, err := st.ClusterID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id != store.DefaultClusterID {
		t.Fatalf("a new installation's cluster id is %s, want the default %s", id, store.DefaultClusterID)
	}
	runAI := uuid.MustParse("d73a738f-fab3-430a-8fa3-5241493d7128")
	for range 2 { // the second time changes nothing
		if err := st.SetClusterID(ctx, runAI, operator); err != nil {
			t.Fatal(err)
		}
	}
	if id, err := st.ClusterID(ctx); err != nil || id != runAI {
		t.Fatalf("after setting it the cluster id is %s (%v), want %s", id, err, runAI)
	}
	for filter, want := range map[string]int{"clusterId==" + runAI.String(): 1, "clusterId==" + store.DefaultClusterID.String(): 0} {
		v := url.Values{"filterBy": {filter}}
		q, err := listquery.Parse(v, store.ProjectSpec)
		if err != nil {
			t.Fatal(err)
		}
		ps, _, err := st.Projects(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != want || want == 1 && ps[0].ID != alpha.ID {
			t.Errorf("projects with %s: %d, want %d", filter, len(ps), want)
		}
	}
	q, _ := listquery.Parse(url.Values{"filterBy": {"entityType==cluster"}}, store.AuditSpec)
	entries, _, err := st.AuditLog(ctx, q, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].EntityID != runAI.String() {
		t.Errorf("the cluster id's change is audited as %v, want one entry naming %s", entries, runAI)
	}
}
