package store_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// throttle is the web layer's schedule: three free attempts, then 2 s, 4 s, ...
func throttle(n int) time.Duration {
	if n < 3 {
		return 0
	}
	return time.Duration(1<<min(n-2, 20)) * time.Second
}

// TestParallelLoginAttemptsAreReservedOneAfterAnother: 32 parallel reservations for the same
// account and address let exactly three through (the free allowance); the rest are told to
// wait. Giving one back lets one more through; clearing forgets everything.
func TestParallelLoginAttemptsAreReservedOneAfterAnother(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	keys := []string{"address:192.0.2.1", "account:admin"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed, refused := 0, 0
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait, err := st.ReserveLoginAttempt(ctx, keys, throttle)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case wait == 0:
				allowed++
			case wait > 0 && wait <= 2*time.Second:
				refused++
			default:
				t.Errorf("wait %v", wait)
			}
		}()
	}
	wg.Wait()
	if allowed != 3 || refused != 29 {
		t.Fatalf("%d attempts allowed and %d refused, want 3 and 29", allowed, refused)
	}
	// Another address, same account: the account is blocked too.
	if wait, err := st.ReserveLoginAttempt(ctx, []string{"account:admin", "address:192.0.2.2"}, throttle); err != nil || wait == 0 {
		t.Fatalf("the blocked account from another address: wait %v, err %v", wait, err)
	}
	if err := st.ReleaseLoginAttempt(ctx, keys, throttle); err != nil {
		t.Fatal(err)
	}
	if wait, err := st.ReserveLoginAttempt(ctx, keys, throttle); err != nil || wait != 0 {
		t.Fatalf("after giving an attempt back: wait %v, err %v", wait, err)
	}
	if wait, err := st.ReserveLoginAttempt(ctx, keys, throttle); err != nil || wait == 0 {
		t.Fatalf("the fourth attempt: wait %v, err %v", wait, err)
	}
	if err := st.ClearLoginFailures(ctx, keys); err != nil {
		t.Fatal(err)
	}
	if wait, err := st.ReserveLoginAttempt(ctx, keys, throttle); err != nil || wait != 0 {
		t.Fatalf("after clearing: wait %v, err %v", wait, err)
	}
}

// TestServerKeyIsSharedAndStable: every caller (every replica) gets the same key, made once.
func TestServerKeyIsSharedAndStable(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	a, b := store.New(pool), store.New(pool)
	ctx := context.Background()
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := a
			if i%2 == 1 {
				st = b
			}
			k, err := st.ServerKey(ctx, "login-form")
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if len(k) != 32 || !bytes.Equal(k, keys[0]) {
			t.Fatalf("keys differ: %x", keys)
		}
	}
	if other, err := a.ServerKey(ctx, "something-else"); err != nil || bytes.Equal(other, keys[0]) {
		t.Errorf("another name gave %x, %v", other, err)
	}
}
