package pglocal

import (
	"context"
	"time"
)

// Restart delays: the first restart after an unexpected exit waits minRestartDelay; each
// failed attempt, or a new exit within stableAfter of the last restart, doubles the delay up
// to maxRestartDelay.
var (
	minRestartDelay = 250 * time.Millisecond
	maxRestartDelay = 15 * time.Second
	stableAfter     = time.Minute
)

// supervise restarts the server whenever its process exits without Stop, on the same data
// directory and socket, until Stop. Each exit and each restart is logged once.
func (s *Server) supervise(p *process) {
	defer close(s.supervised)
	delay := minRestartDelay
	for {
		select {
		case <-s.stopping:
			return
		case <-p.exited:
		}
		select {
		case <-s.stopping:
			return // Stop got there first: an expected exit
		default:
		}
		s.mu.Lock()
		s.proc = nil
		s.mu.Unlock()
		if time.Since(p.started) >= stableAfter {
			delay = minRestartDelay
		}
		s.opts.Log.Error("PostgreSQL exited unexpectedly; restarting it", "err", p.err, "in", delay,
			"log", s.LogPath(), "tail", string(tail(s.readLog(), 10)))
		for attempt := 1; ; attempt++ {
			select {
			case <-s.stopping:
				return
			case <-time.After(delay):
			}
			delay = min(delay*2, maxRestartDelay)
			np, err := s.restart()
			if err == nil {
				s.restarts.Add(1)
				s.opts.Log.Info("PostgreSQL restarted", "pid", np.cmd.Process.Pid, "attempt", attempt)
				p = np
				break
			}
			if s.ctx.Err() != nil {
				return
			}
			s.opts.Log.Warn("PostgreSQL did not restart; trying again", "err", err, "in", delay)
		}
	}
}

// restart launches a new postmaster after the last one died.
func (s *Server) restart() (*process, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.StartTimeout)
	defer cancel()
	// The dead postmaster's pid file stays behind; a postgres that some other hand started on
	// this data directory meanwhile is shut down, as at Start.
	if err := clearPostmasterPID(s.dataDir, s.opts); err != nil {
		return nil, err
	}
	p, err := s.launch(ctx)
	if err != nil {
		return nil, err
	}
	// Stop, if it began meanwhile, waits for this goroutine before it stops s.proc.
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	return p, nil
}
