package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// TestPatchesSeeTheLockedRow: parallel read-modify-write patches (each adds one second to the
// minimum runtime, or one GPU to a department's quota) all count, because each patch is given
// the row as the one before left it; a patch's error refuses the change and comes back as is.
func TestPatchesSeeTheLockedRow(t *testing.T) {
	t.Parallel()
	st, _, dept, proj := orgFixture(t)
	ctx := context.Background()
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := st.PatchProject(ctx, proj.ID, func(p store.Project) (store.ProjectUpdate, error) {
				return store.ProjectUpdate{Policy: store.PolicyUpdate{MinRuntimeSeconds: set(p.MinRuntimeSeconds + 1)}}, nil
			}, operator)
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := st.PatchDepartment(ctx, dept.ID, func(d store.Department) (store.DepartmentUpdate, error) {
				return store.DepartmentUpdate{Resources: set([]store.QuotaInput{quota("a100", d.Quotas[0].Deserved+1, -1)})}, nil
			}, operator)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	p, err := st.Project(ctx, proj.ID)
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.Department(ctx, dept.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.MinRuntimeSeconds != n || d.Quotas[0].Deserved != 16+n {
		t.Errorf("after %d parallel increments: minRuntimeSeconds %d, department deserved %d; want %d and %d", n, p.MinRuntimeSeconds, d.Quotas[0].Deserved, n, 16+n)
	}

	refused := errors.New("refused by the caller")
	_, err = st.PatchProject(ctx, proj.ID, func(store.Project) (store.ProjectUpdate, error) {
		return store.ProjectUpdate{Name: set("renamed")}, refused
	}, operator)
	if !errors.Is(err, refused) {
		t.Fatalf("a refusing patch answered %v", err)
	}
	if err := st.DeleteProjectIf(ctx, proj.ID, func(store.Project) error { return refused }, operator); !errors.Is(err, refused) {
		t.Fatalf("a refusing delete check answered %v", err)
	}
	if ps, _, _ := st.Projects(ctx, listquery.Query{SortBy: "name", Limit: 10}); len(ps) != 1 || ps[0].Name != "alpha" {
		t.Errorf("after refused changes: %+v", ps)
	}
	// A scope limits a list (and its paging) to the projects named.
	other, err := st.CreateProject(ctx, store.ProjectUpdate{Name: set("beta"), DepartmentID: set(dept.ID)}, operator)
	if err != nil {
		t.Fatal(err)
	}
	ps, next, err := st.VisibleProjects(ctx, listquery.Query{SortBy: "name", Limit: 1}, store.ProjectScope{IDs: []uuid.UUID{other.ID}})
	if err != nil || len(ps) != 1 || ps[0].Name != "beta" || next != nil {
		t.Errorf("scoped list = %v, next %v, err %v; want beta alone, no next page", ps, next, err)
	}
	if ps, _, _ := st.VisibleProjects(ctx, listquery.Query{SortBy: "name", Limit: 10}, store.ProjectScope{}); len(ps) != 0 {
		t.Errorf("an empty scope lists %d projects", len(ps))
	}
	// The count of a scoped list counts what the list holds over all its pages.
	for _, c := range []struct {
		scope store.ProjectScope
		want  int
	}{{store.ProjectScope{IDs: []uuid.UUID{other.ID}}, 1}, {store.ProjectScope{}, 0}, {store.ProjectScope{All: true}, 2}} {
		if n, err := st.CountVisibleProjects(ctx, listquery.Query{SortBy: "name", Limit: 1}, c.scope); err != nil || n != c.want {
			t.Errorf("count in scope %+v = %d (%v), want %d", c.scope, n, err, c.want)
		}
	}
}
