// Package pglocal starts a private PostgreSQL server from the system's server binaries
// (initdb and postgres, as installed by the distribution's postgresql package).
//
// Two uses share this code:
//   - `arbiter serve` without --database-url keeps a persistent instance in its data
//     directory: initdb runs only the first time, the data survives restarts, and the server
//     runs with PostgreSQL's durable defaults (fsync, synchronous_commit, full_page_writes on).
//   - tests start a throwaway instance in a fresh temporary directory that Stop removes; it
//     runs with fsync, synchronous_commit and full_page_writes off (speed over crash safety),
//     and with Pdeathsig=SIGKILL so that a test binary that dies never leaks it.
//
// The server is a child process (postgres is exec'd directly rather than through pg_ctl) so
// that this process owns it: Stop shuts it down, and its stdout/stderr go to postgres.log in
// the data directory. When it exits unexpectedly (killed, crashed), it is started again on
// the same data directory and socket, after a delay that doubles from 250 ms up to 15 s while
// it keeps failing (supervise.go); connection URLs therefore stay valid across restarts.
//
// Access: the server listens on no TCP address at all (listen_addresses=”), only on a Unix
// socket in a directory of mode 0700 owned by the user the server runs as (<data dir>/socket,
// or a private directory under /tmp when that path is too long for a socket). Only that user
// and root can reach the socket, so pg_hba.conf ("local all all trust", rewritten at every
// start, which also upgrades data directories of earlier versions that trusted 127.0.0.1)
// admits no one else.
//
// Running as root: initdb and postgres refuse to run as root, so they run as the `postgres`
// system user (or, for an existing data directory owned by some other non-root user, as that
// user), and the data directory is chowned to it. That user must be able to traverse every
// parent of the data directory. pglocal does not change the permissions of directories it did
// not create (that would silently weaken e.g. /root, which is 0700); instead Start fails with
// an error naming the directory that blocks the way. ./.arbiter/pg inside a checkout under
// /work or /home/<user> (0755) and temporary directories under /tmp work as they are.
//
// A postmaster.pid left behind by an earlier run is handled at start: if its process is gone
// (or is not a postgres serving this data directory) the file is removed; if a postgres from an
// earlier run of this same data directory is still running (e.g. arbiter was SIGKILLed), it is
// shut down cleanly (fast shutdown) and a new server is started, so that this process always
// owns the server it reports.
package pglocal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Options configure Start.
type Options struct {
	// Dir is the PostgreSQL data directory of a persistent instance, created if missing.
	// For a Throwaway instance it is the parent of the temporary data directory; "" means
	// /dev/shm when that is a tmpfs with at least 1 GiB free, else os.TempDir().
	Dir string
	// Throwaway instances live in a new temporary directory removed by Stop, are killed by the
	// kernel if this process dies (Pdeathsig), and run without fsync, synchronous_commit and
	// full_page_writes: a crash of the operating system (not of PostgreSQL) can corrupt their
	// data, the right trade for tests. Persistent instances keep PostgreSQL's durable defaults.
	Throwaway bool
	// Database is created at start if absent; "" means "arbiter".
	Database string
	// MaxConnections is the server's max_connections; 0 means 200, enough for parallel tests.
	MaxConnections int
	// StartTimeout bounds initdb plus server start, and each restart; 0 means 2 minutes.
	StartTimeout time.Duration
	// StopTimeout is how long Stop waits for a fast shutdown before SIGKILL; 0 means 30 s.
	StopTimeout time.Duration
	// Log receives progress messages; nil discards them.
	Log *slog.Logger
}

// Server is a running PostgreSQL started by Start, restarted when it dies, until Stop.
type Server struct {
	dataDir   string
	socketDir string
	ownSocket bool // socketDir is a temporary directory that Stop removes
	removeDir bool // Stop removes the data directory (a throwaway instance's)
	database  string
	opts      Options
	bins      Binaries
	acct      account

	mu   sync.Mutex
	proc *process // the current postgres process

	ctx        context.Context // cancelled by Stop, to abandon a restart under way
	cancel     context.CancelFunc
	stopping   chan struct{} // closed when Stop begins, to tell expected from unexpected exits
	supervised chan struct{} // closed when the supervisor has returned
	done       chan struct{} // closed when Stop has finished
	stopOnce   sync.Once
	stopErr    error
	restarts   atomic.Int64
}

const (
	superuser   = "postgres"
	logFileName = "postgres.log"
	// port only names the socket file (.s.PGSQL.5432): there is no TCP listener.
	port = 5432
	// socketSubdir is the socket's directory inside the data directory.
	socketSubdir = "socket"
	// maxSocketPath is the usable length of sun_path on Linux (108 bytes with the NUL).
	maxSocketPath = 107
)

// Start initialises the data directory if needed, starts the server, waits until it accepts
// connections and creates the database. ctx bounds the start only; the server runs until Stop.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Database == "" {
		opts.Database = "arbiter"
	}
	if opts.MaxConnections == 0 {
		opts.MaxConnections = 200
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 30 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	// Fail on missing binaries before touching the file system.
	if _, err := FindBinaries(); err != nil {
		return nil, fmt.Errorf("pglocal: %w", err)
	}

	dataDir, err := prepareDataDir(opts)
	if err != nil {
		return nil, err
	}
	s, err := start(ctx, dataDir, opts)
	if err != nil && opts.Throwaway {
		os.RemoveAll(dataDir)
	}
	return s, err
}

func prepareDataDir(opts Options) (string, error) {
	if opts.Throwaway {
		parent := opts.Dir
		if parent == "" {
			parent = throwawayParent()
		}
		dir, err := os.MkdirTemp(parent, "arbiter-pg-")
		if err != nil {
			return "", fmt.Errorf("pglocal: create temporary data directory: %w", err)
		}
		return filepath.Abs(dir)
	}
	if opts.Dir == "" {
		return "", errors.New("pglocal: Options.Dir is required for a persistent instance")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return "", fmt.Errorf("pglocal: %w", err)
	}
	// Parents this creates (./.arbiter of ./.arbiter/pg) must be traversable by the postgres
	// user when root runs this; postgres insists on 0700 for the data directory itself.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("pglocal: create data directory: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("pglocal: create data directory: %w", err)
	}
	return dir, nil
}

// shmDir is where throwaway data directories go when it is a roomy tmpfs.
var shmDir = "/dev/shm"

const (
	tmpfsMagic    = 0x01021994 // statfs f_type of tmpfs
	minShmFreeFor = 1 << 30    // bytes free on shmDir needed to use it: instance, template and clones
)

// throwawayParent picks the parent of a throwaway data directory. Memory beats disk there:
// cloning a test database (CREATE DATABASE ... STRATEGY FILE_COPY, which checkpoints) took
// about 17 ms on tmpfs against 45-250 ms on the virtio disk of a busy CI machine, even with
// fsync off. Small /dev/shm mounts (64 MiB in a default Docker container) are left alone.
func throwawayParent() string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(shmDir, &st); err != nil || st.Type != tmpfsMagic || st.Bavail*uint64(st.Bsize) < minShmFreeFor {
		return os.TempDir()
	}
	if fi, err := os.Stat(shmDir); err != nil || fi.Mode().Perm()&0o003 != 0o003 {
		return os.TempDir() // not writable and traversable by everyone, e.g. the postgres user
	}
	return shmDir
}

func start(ctx context.Context, dataDir string, opts Options) (*Server, error) {
	acct, err := chooseAccount(dataDir)
	if err != nil {
		return nil, err
	}
	if acct.credential != nil {
		if err := checkTraversable(dataDir, acct); err != nil {
			return nil, err
		}
	}

	major, err := dataDirMajor(dataDir)
	if err != nil {
		return nil, err
	}
	bins, err := binariesFor(major)
	if err != nil {
		return nil, fmt.Errorf("pglocal: %w", err)
	}
	if major == 0 {
		if err := initdb(ctx, bins, dataDir, acct, opts); err != nil {
			return nil, err
		}
	}
	if err := writeHBA(dataDir, acct); err != nil {
		return nil, err
	}
	socketDir, ownSocket, err := makeSocketDir(dataDir, acct)
	if err != nil {
		return nil, err
	}
	s := &Server{
		dataDir: dataDir, socketDir: socketDir, ownSocket: ownSocket, database: opts.Database,
		opts: opts, bins: bins, acct: acct, removeDir: opts.Throwaway,
		stopping: make(chan struct{}), supervised: make(chan struct{}), done: make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	fail := func(err error) (*Server, error) {
		s.cancel()
		if ownSocket {
			os.RemoveAll(socketDir)
		}
		return nil, err
	}
	if err := clearPostmasterPID(dataDir, opts); err != nil {
		return fail(err)
	}
	p, err := s.launch(ctx)
	if err != nil {
		return fail(err)
	}
	s.proc = p
	go s.supervise(p)
	if err := s.createDatabase(ctx, opts.Database); err != nil {
		s.keepDataDir()
		s.Stop()
		return nil, err
	}
	opts.Log.Info("PostgreSQL ready", "dir", dataDir, "url", s.URL(""), "throwaway", opts.Throwaway)
	return s, nil
}

// keepDataDir makes Stop leave the data directory in place (Start removes a throwaway one
// itself after a failed start).
func (s *Server) keepDataDir() { s.removeDir = false }

// URL returns the connection URL of database dbname on this server; "" means the database
// created by Start (Options.Database). It names the Unix socket's directory (host=/path).
func (s *Server) URL(dbname string) string {
	if dbname == "" {
		dbname = s.database
	}
	q := url.Values{"host": {s.socketDir}, "port": {strconv.Itoa(port)}, "sslmode": {"disable"}}
	u := url.URL{Scheme: "postgres", User: url.User(superuser), Path: "/" + dbname, RawQuery: q.Encode()}
	return u.String()
}

// SocketDir is the directory of the server's Unix socket, mode 0700.
func (s *Server) SocketDir() string { return s.socketDir }

// DataDir is the absolute path of the data directory.
func (s *Server) DataDir() string { return s.dataDir }

// LogPath is the file that receives the server's output.
func (s *Server) LogPath() string { return filepath.Join(s.dataDir, logFileName) }

// PID is the process id of the current postmaster (0 while it is being restarted).
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// Restarts counts the restarts after unexpected exits so far.
func (s *Server) Restarts() int { return int(s.restarts.Load()) }

// Done is closed once Stop has shut the server down for good.
func (s *Server) Done() <-chan struct{} { return s.done }
