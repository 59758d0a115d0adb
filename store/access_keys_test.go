package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// localPerson makes a local account and returns its users row id.
func localPerson(t *testing.T, st *store.Store, name string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	if _, err := st.EnsureLocalUser(ctx, name, name, false, func() (string, error) { return "not a real hash", nil }); err != nil {
		t.Fatal(err)
	}
	u, err := st.LocalUser(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func accessKeyOf(owner uuid.UUID, name string) store.NewAccessKey {
	return store.NewAccessKey{ID: uuid.New(), OwnerUserID: owner, Name: name, ExpiresAt: time.Now().Add(time.Hour), SecretHash: []byte("x")}
}

// TestAccessKeyBoundHoldsUnderConcurrentCreates: with one key short of the bound, two creates
// at once leave the person at the bound, not over it (the person's row is locked while their
// keys are counted).
func TestAccessKeyBoundHoldsUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	owner := localPerson(t, st, "rita")
	for i := range store.MaxAccessKeysPerPerson - 1 {
		if _, err := st.CreateAccessKey(ctx, accessKeyOf(owner, fmt.Sprintf("key-%d", i)), operator); err != nil {
			t.Fatal(err)
		}
	}
	// Hold back every insert into api_keys until both creates are waiting, so that they
	// overlap: each has counted (or waits to count) before either has inserted.
	pool := st.Pool()
	hold, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback(ctx)
	if _, err := hold.Exec(ctx, `LOCK TABLE api_keys IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = st.CreateAccessKey(ctx, accessKeyOf(owner, fmt.Sprintf("racing-%d", i)), operator)
		}()
	}
	poll.UntilNil(t, "both creates wait on a lock", 30*time.Second, func() error {
		var waiting int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			return err
		}
		if waiting < 2 {
			return fmt.Errorf("%d waiting", waiting)
		}
		return nil
	})
	if err := hold.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("two creates at the bound: %v and %v, want exactly one refused", errs[0], errs[1])
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, store.ErrConflict) {
			t.Errorf("the refused create = %v, want ErrConflict", err)
		}
	}
	keys, err := st.AccessKeys(ctx, store.AccessKeyFilter{OwnerUserID: &owner})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != store.MaxAccessKeysPerPerson {
		t.Errorf("the person holds %d keys, want the bound %d", len(keys), store.MaxAccessKeysPerPerson)
	}
}

// TestAccessKeysGoWithTheirPerson: deleting a person's users row deletes their keys, and
// nobody else's.
func TestAccessKeysGoWithTheirPerson(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	st := store.New(pool)
	ctx := context.Background()
	rita, sam := localPerson(t, st, "rita"), localPerson(t, st, "sam")
	for _, owner := range []uuid.UUID{rita, rita, sam} {
		if _, err := st.CreateAccessKey(ctx, accessKeyOf(owner, uuid.NewString()[:8]), operator); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `DELETE FROM users WHERE id = $1`, rita); err != nil {
		t.Fatal(err)
	}
	keys, err := st.AccessKeys(ctx, store.AccessKeyFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || *keys[0].OwnerUserID != sam {
		t.Errorf("keys left = %+v, want sam's one", keys)
	}
	if _, err := st.CreateAccessKey(ctx, accessKeyOf(rita, "late"), operator); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a key for the deleted person = %v, want ErrNotFound", err)
	}
}
