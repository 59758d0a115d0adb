package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

var system = store.Actor{Subject: "test", SubjectType: "system"}

// TestTwoLocalAdminsDeletingEachOtherAtOnceLeaveOne: the bootstrap admin and a local user
// holding admin by a rule are deleted in parallel, again and again: each time exactly one
// delete succeeds and the other is refused as the last local admin's.
func TestTwoLocalAdminsDeletingEachOtherAtOnceLeaveOne(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	for round := range 5 {
		name := fmt.Sprintf("admin-%d", round)
		if _, err := st.EnsureLocalUser(ctx, name, "", false, func() (string, error) { return "hash", nil }); err != nil {
			t.Fatal(err)
		}
		first, err := st.LocalUser(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		second, err := st.CreateLocalUser(ctx, fmt.Sprintf("second-%d@example.com", round), "hash", system)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateAccessRule(ctx, store.NewAccessRule{SubjectType: "user", Subject: second.Email, Role: "admin", ScopeType: "system"}, system); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, id := range []uuid.UUID{first.ID, second.ID} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = st.DeleteUser(ctx, id, name, system)
			}()
		}
		wg.Wait()
		refused := 0
		for _, err := range errs {
			switch {
			case errors.Is(err, store.ErrInvalid):
				refused++
			case err != nil:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if refused != 1 {
			t.Fatalf("round %d: %d of the two deletes refused (%v), want exactly one", round, refused, errs)
		}
		// Clear the survivor for the next round: with no other local admin, from the table.
		if _, err := st.Pool().Exec(ctx, `DELETE FROM users; DELETE FROM access_rules`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestParallelCreatesStopAtTheBound: parallel creates past MaxLocalUsers let exactly the
// bound through.
func TestParallelCreatesStopAtTheBound(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	if _, err := st.Pool().Exec(ctx, `INSERT INTO users (issuer, subject) SELECT 'local', 'filler' || i FROM generate_series(1, $1) i`,
		store.MaxLocalUsers-3); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	made, refused := 0, 0
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.CreateLocalUser(ctx, fmt.Sprintf("p%d@example.com", i), "hash", system)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				made++
			case errors.Is(err, store.ErrConflict):
				refused++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if made != 3 || refused != 9 {
		t.Errorf("%d made and %d refused, want 3 and 9", made, refused)
	}
}
