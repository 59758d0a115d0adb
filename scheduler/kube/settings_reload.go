package kube

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// This file reads the settings again after a configuration change, off the scheduling
// goroutine, and lets a cycle wait a moment for a read that is under way: a project created
// through the API and a workload submitted into it at once were scheduled, for a cycle, with
// the settings from before the project (no project, S6), and the workload's record said so.

// reloadRetry is how long a failed reload waits before it tries again.
var reloadRetry = 5 * time.Second

// settingsWait bounds how long a cycle waits for settings asked for before it began: a
// slow or stalled database holds a cycle no longer than this, and the cycle then goes on with
// the last good settings.
var settingsWait = 500 * time.Millisecond

// reloads counts the reads of the settings asked for (Reload) and those done, so that a cycle
// knows whether the settings it has are older than a change already committed.
type reloads struct {
	mu    sync.Mutex
	asked uint64        // Reload calls so far
	done  uint64        // of those, how many a finished read (successful or not) covered
	read  chan struct{} // closed, and replaced, whenever done moves; nil in a test's Scheduler
}

// Reload asks for the settings to be read again before the next cycle (the store's
// configuration-change notification calls it, after the change is committed).
func (s *Scheduler) Reload() {
	s.reloads.mu.Lock()
	s.reloads.asked++
	s.reloads.mu.Unlock()
	s.askReload()
}

func (s *Scheduler) askReload() {
	select {
	case s.reload <- struct{}{}:
	default:
	}
}

// settingsRead records that a read begun when asked reloads had been asked for has ended.
func (s *Scheduler) settingsRead(asked uint64) {
	r := &s.reloads
	r.mu.Lock()
	defer r.mu.Unlock()
	if asked <= r.done || r.read == nil {
		return
	}
	r.done = asked
	close(r.read)
	r.read = make(chan struct{})
}

// awaitSettings waits, up to settingsWait, until every read of the settings asked for so far
// has ended.
func (s *Scheduler) awaitSettings(ctx context.Context) {
	var deadline <-chan time.Time // made only when a read is under way: most cycles have none
	for {
		r := &s.reloads
		r.mu.Lock()
		pending, read := r.done < r.asked, r.read
		r.mu.Unlock()
		if !pending || read == nil {
			return
		}
		if deadline == nil {
			t := time.NewTimer(settingsWait)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-read:
		case <-deadline:
			s.log.Warn("cycle goes on with the last settings: the configuration's new read is late", "waited", settingsWait)
			return
		case <-ctx.Done():
			return
		}
	}
}

// reloadSettings reads the settings again after each Reload, off the scheduling goroutine: a
// slow or stalled database holds a cycle no longer than settingsWait. Meanwhile, and when
// reading fails, cycles go on with the last good settings; a failed reload is tried again
// after reloadRetry. Each new set of settings is announced on reloaded once stored.
func (s *Scheduler) reloadSettings(ctx context.Context, reloaded chan<- struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.reload:
		}
		s.reloads.mu.Lock()
		asked := s.reloads.asked
		s.reloads.mu.Unlock()
		err := s.loadSettings(ctx)
		s.settingsRead(asked) // a failed read is done too: cycles do not wait for its retry
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("configuration not reloaded; scheduling from the last good one", "err", err, "retry", reloadRetry)
			select {
			case <-ctx.Done():
				return
			case <-time.After(reloadRetry):
				s.askReload()
			}
			continue
		}
		select {
		case reloaded <- struct{}{}:
		default:
		}
	}
}

func (s *Scheduler) loadSettings(ctx context.Context) error {
	st, err := s.opts.LoadSettings(ctx)
	if err != nil {
		if s.settings.Load() != nil {
			return err
		}
		return fmt.Errorf("kube: load configuration: %w", err)
	}
	s.settings.Store(st)
	return nil
}
