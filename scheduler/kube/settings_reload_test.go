package kube

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/scheduler"
)

// A cycle that begins after a configuration change was committed (Reload) schedules with it:
// it waits for the read under way. A read that fails does not hold later cycles, and one that
// stalls holds a cycle no longer than settingsWait.
func TestS6_ACycleAfterAConfigurationChangeHasIt(t *testing.T) {
	before := &Settings{Projects: []scheduler.Project{{Name: "old"}}}
	after := &Settings{Projects: []scheduler.Project{{Name: "old"}, {Name: "new"}}}
	gate := make(chan error)
	s := &Scheduler{log: slog.New(slog.NewTextHandler(io.Discard, nil)), reload: make(chan struct{}, 1),
		reloads: reloads{read: make(chan struct{})},
		opts: Options{LoadSettings: func(ctx context.Context) (*Settings, error) {
			select {
			case err := <-gate:
				if err != nil {
					return nil, err
				}
				return after, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}}
	s.settings.Store(before)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.reloadSettings(ctx, make(chan struct{}, 1))

	s.Reload()
	go func() { gate <- nil }() // the read ends while the cycle waits
	s.awaitSettings(ctx)
	if got := s.settings.Load(); got != after {
		t.Fatalf("settings after the wait have %d projects, want the new project's %d", len(got.Projects), len(after.Projects))
	}

	// A failed read: the cycle goes on with the last good settings, and the next does not wait.
	s.Reload()
	go func() { gate <- errors.New("database down") }()
	s.awaitSettings(ctx)
	s.reloads.mu.Lock()
	done, asked := s.reloads.done, s.reloads.asked
	s.reloads.mu.Unlock()
	if done != asked || s.settings.Load() != after {
		t.Errorf("after a failed read: %d of %d reads done, settings changed: %v; want all done, the last good settings", done, asked, s.settings.Load() != after)
	}

	// A stalled read holds a cycle for settingsWait at most.
	defer func(d time.Duration) { settingsWait = d }(settingsWait)
	settingsWait = 20 * time.Millisecond
	s.Reload()
	s.awaitSettings(ctx) // returns without the read, which never ends here
	if s.settings.Load() != after {
		t.Errorf("settings changed without a read")
	}
}
