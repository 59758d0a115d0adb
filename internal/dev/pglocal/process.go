package pglocal

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// process is one run of the postmaster.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{} // closed when the process has exited
	err     error         // its exit status, valid once exited is closed
}

// launch starts postgres on the data directory and waits until it accepts connections; a
// process that fails to get there is stopped.
func (s *Server) launch(ctx context.Context) (*process, error) {
	logPath := s.LogPath()
	// Keep the previous run's log: it may explain why that run ended.
	os.Rename(logPath, logPath+".1")
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pglocal: %w", err)
	}
	defer logFile.Close() // the child holds its own copy of the descriptor
	if c := s.acct.credential; c != nil {
		os.Chown(logPath, int(c.Uid), int(c.Gid))
	}

	args := []string{
		"-D", s.dataDir,
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=", // no TCP at all: the socket's directory decides who may connect
		"-c", "unix_socket_directories=" + s.socketDir,
		"-c", "unix_socket_permissions=0700",
		"-c", "max_connections=" + strconv.Itoa(s.opts.MaxConnections),
		"-c", "shared_buffers=32MB",
		"-c", "logging_collector=off",
	}
	if s.opts.Throwaway {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	// No ctx here: the server outlives Start, until Stop.
	cmd := command(nil, s.bins.Postgres, args, s.acct, s.opts.Throwaway)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pglocal: start %s: %w", s.bins.Postgres, err)
	}
	p := &process{cmd: cmd, started: time.Now(), exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	if err := s.waitReady(ctx, p); err != nil {
		s.stopProcess(p)
		return nil, err
	}
	return p, nil
}

// waitReady polls until the server accepts connections, and fails early with the tail of its
// log if it exits first.
func (s *Server) waitReady(ctx context.Context, p *process) error {
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("pglocal: postgres exited during start (%v); %s ends with:\n%s", p.err, s.LogPath(), tail(s.readLog(), 20))
		default:
		}
		if err := s.ping(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pglocal: postgres did not accept connections in time (%w); %s ends with:\n%s", ctx.Err(), s.LogPath(), tail(s.readLog(), 20))
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// ping connects and checks that the server answering on the socket is this one.
func (s *Server) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var dir string
	if err := conn.QueryRow(ctx, "show data_directory").Scan(&dir); err != nil {
		return err
	}
	if filepath.Clean(dir) != s.dataDir {
		return fmt.Errorf("the socket in %s is served by another PostgreSQL (data directory %s)", s.socketDir, dir)
	}
	return nil
}

func (s *Server) createDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, "select exists(select 1 from pg_database where datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "create database "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("pglocal: create database %s: %w", name, err)
	}
	return nil
}

// Stop shuts the server down (fast shutdown: open transactions are rolled back), kills it if
// it has not exited within Options.StopTimeout, ends the supervision, and removes a throwaway
// data directory. It is safe to call more than once and from several goroutines.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		close(s.stopping)
		s.cancel()
		<-s.supervised // no restart begins after this
		s.mu.Lock()
		p := s.proc
		s.mu.Unlock()
		var err error
		if p != nil {
			err = s.stopProcess(p)
		}
		if s.ownSocket {
			os.RemoveAll(s.socketDir)
		}
		if s.removeDir {
			if rmErr := os.RemoveAll(s.dataDir); rmErr != nil && err == nil {
				err = fmt.Errorf("pglocal: remove %s: %w", s.dataDir, rmErr)
			}
		}
		s.stopErr = err
		close(s.done)
	})
	return s.stopErr
}

// stopProcess asks p for a fast shutdown and kills it after the stop timeout.
func (s *Server) stopProcess(p *process) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
		return nil
	case <-time.After(s.opts.StopTimeout):
		p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("pglocal: postgres did not shut down within %s and was killed", s.opts.StopTimeout)
	}
}

func (s *Server) readLog() []byte {
	b, _ := os.ReadFile(s.LogPath())
	return b
}

// tail returns the last n lines of b.
func tail(b []byte, n int) []byte {
	b = bytes.TrimRight(b, "\n")
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			n--
			if n == 0 {
				return b[i+1:]
			}
		}
	}
	return b
}
