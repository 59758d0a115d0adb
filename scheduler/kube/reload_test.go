package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/scheduler"
)

// A reload that fails (the database is down) or hangs keeps the last good settings, never
// holds the scheduling goroutine, and is tried again until it succeeds.
func TestFailedReloadKeepsLastGoodSettings(t *testing.T) {
	saved := reloadRetry
	reloadRetry = 50 * time.Millisecond
	t.Cleanup(func() { reloadRetry = saved })

	good := &Settings{Priorities: []scheduler.Priority{{Name: "good", Value: 1}}}
	newer := &Settings{Priorities: []scheduler.Priority{{Name: "newer", Value: 2}}}
	var mu sync.Mutex
	var calls int
	answer := func(context.Context) (*Settings, error) { return good, nil }
	s, err := New(Options{SchedulerName: "arbiter", Config: &rest.Config{Host: "http://127.0.0.1:1"},
		LoadSettings: func(ctx context.Context) (*Settings, error) {
			mu.Lock()
			calls++
			f := answer
			mu.Unlock()
			return f(ctx)
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := s.loadSettings(ctx); err != nil {
		t.Fatal(err)
	}
	reloaded := make(chan struct{}, 1)
	go s.reloadSettings(ctx, reloaded)

	// The database stalls: the reload hangs until its deadline, then fails, again and again.
	stalled := make(chan struct{})
	mu.Lock()
	answer = func(ctx context.Context) (*Settings, error) {
		select {
		case <-stalled:
		case <-time.After(100 * time.Millisecond):
		}
		return nil, errors.New("the database is unavailable")
	}
	mu.Unlock()
	s.Reload()
	// Four loads: the first, the reload and at least two retries.
	poll.UntilNil(t, "a failed reload is retried twice", 10*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if calls < 4 {
			return fmt.Errorf("%d loads", calls)
		}
		return nil
	})
	if got := s.settings.Load(); got != good {
		t.Fatalf("settings after failed reloads = %+v, want the last good ones", got)
	}

	// The database answers again: the retry picks up the newer settings.
	mu.Lock()
	answer = func(context.Context) (*Settings, error) { return newer, nil }
	mu.Unlock()
	close(stalled)
	select {
	case <-reloaded:
	case <-time.After(10 * time.Second):
		t.Fatal("the settings were not reloaded once the database answered")
	}
	if got := s.settings.Load(); got != newer {
		t.Fatalf("settings = %+v, want the newer ones", got)
	}
}
