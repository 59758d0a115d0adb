// Package pglocal starts a private PostgreSQL server from the system's server binaries
// (initdb and postgres, as installed by the distribution's postgresql package).
//
// Two uses share this code:
//   - `arbiter serve` without --database-url keeps a persistent instance in its data
//     directory: initdb runs only the first time, the data survives restarts.
//   - tests start a throwaway instance in a fresh temporary directory that Stop removes; the
//     server is started with Pdeathsig=SIGKILL so that a test binary that dies never leaks it.
//
// The server is a child process (postgres is exec'd directly rather than through pg_ctl) so
// that this process owns it: Stop shuts it down, and its stdout/stderr go to postgres.log in
// the data directory. It listens on 127.0.0.1 only, on a free port chosen at every start, and
// on a Unix socket in the data directory; authentication is "trust" (set at initdb), which is
// acceptable only because nothing but loopback can reach it.
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
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options configure Start.
type Options struct {
	// Dir is the PostgreSQL data directory of a persistent instance, created if missing.
	// For a Throwaway instance it is the parent of the temporary data directory; "" means
	// /dev/shm when that is a tmpfs with at least 1 GiB free, else os.TempDir().
	Dir string
	// Throwaway instances live in a new temporary directory removed by Stop, and are killed
	// by the kernel if this process dies (Pdeathsig).
	Throwaway bool
	// Durable keeps fsync, synchronous_commit and full_page_writes on. Off, a crash of the
	// operating system (not of PostgreSQL) can corrupt the data; that is the right trade for
	// tests and usually for development, where speed matters more.
	Durable bool
	// Database is created at start if absent; "" means "arbiter".
	Database string
	// MaxConnections is the server's max_connections; 0 means 200, enough for parallel tests.
	MaxConnections int
	// StartTimeout bounds initdb plus server start; 0 means 2 minutes.
	StartTimeout time.Duration
	// StopTimeout is how long Stop waits for a fast shutdown before SIGKILL; 0 means 30 s.
	StopTimeout time.Duration
	// Log receives progress messages; nil discards them.
	Log *slog.Logger
}

// Server is a running PostgreSQL started by Start.
type Server struct {
	dataDir     string
	port        int
	database    string
	throwaway   bool
	stopTimeout time.Duration
	log         *slog.Logger

	cmd     *exec.Cmd
	exited  chan struct{} // closed when the postgres process has exited
	waitErr error         // the process's exit status, valid after exited is closed

	ready    atomic.Bool // set once the server accepted connections; before, exits are start errors
	stopOnce sync.Once
	stopErr  error
	stopping chan struct{} // closed when Stop begins, to tell expected from unexpected exits
}

const (
	superuser   = "postgres"
	logFileName = "postgres.log"
	// maxSocketPath is the usable length of sun_path on Linux (108 bytes with the NUL).
	maxSocketPath = 107
	// portAttempts bounds retries when another process takes the chosen port first.
	portAttempts = 5
)

// account is the operating-system user initdb and postgres run as.
type account struct {
	name       string
	credential *syscall.Credential // nil: run as this process's user
}

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
	if err := clearPostmasterPID(dataDir, opts); err != nil {
		return nil, err
	}

	var s *Server
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("pglocal: choose a port: %w", err)
		}
		s, err = launch(ctx, bins, dataDir, port, acct, opts)
		if err == nil {
			break
		}
		if errors.Is(err, errPortTaken) && attempt < portAttempts {
			opts.Log.Debug("postgres port taken, retrying", "port", port)
			continue
		}
		return nil, err
	}
	if err := s.createDatabase(ctx, opts.Database); err != nil {
		s.Stop()
		return nil, err
	}
	opts.Log.Info("PostgreSQL ready", "dir", dataDir, "url", s.URL(""), "throwaway", opts.Throwaway)
	return s, nil
}

// chooseAccount decides which user runs initdb and postgres, and hands the data directory to it.
func chooseAccount(dataDir string) (account, error) {
	if os.Geteuid() != 0 {
		return account{name: currentUserName()}, nil
	}
	fi, err := os.Stat(dataDir)
	if err != nil {
		return account{}, fmt.Errorf("pglocal: %w", err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	var u *user.User
	if st.Uid != 0 {
		// An existing directory of another user (e.g. created by an earlier non-root run):
		// keep running as its owner rather than taking it over.
		u, err = user.LookupId(strconv.Itoa(int(st.Uid)))
	} else {
		u, err = user.Lookup("postgres")
		if err != nil {
			return account{}, errors.New("pglocal: running as root, but initdb refuses root and there is no `postgres` user to run it as; install the PostgreSQL server (apt-get install -y postgresql), which creates that user, or run as a normal user")
		}
	}
	if err != nil {
		return account{}, fmt.Errorf("pglocal: look up the owner of %s: %w", dataDir, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.Atoi(id); err == nil {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
	}
	if st.Uid != cred.Uid || st.Gid != cred.Gid {
		if err := os.Chown(dataDir, uid, gid); err != nil {
			return account{}, fmt.Errorf("pglocal: hand the data directory to user %s: %w", u.Username, err)
		}
	}
	return account{name: u.Username, credential: cred}, nil
}

func currentUserName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return strconv.Itoa(os.Getuid())
}

// checkTraversable reports the first parent of dataDir that acct may not search, because the
// kernel would stop initdb and postgres there with a bare "Permission denied".
func checkTraversable(dataDir string, acct account) error {
	cred := acct.credential
	for dir := filepath.Dir(dataDir); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("pglocal: %w", err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		var bit os.FileMode = 0o001
		switch {
		case st.Uid == cred.Uid:
			bit = 0o100
		case st.Gid == cred.Gid || containsID(cred.Groups, st.Gid):
			bit = 0o010
		}
		if fi.Mode().Perm()&bit == 0 {
			return fmt.Errorf("pglocal: PostgreSQL runs as user %q here (initdb refuses root), and that user cannot reach %s: %s is mode %04o, owner uid %d; "+
				"choose a data directory every parent of which that user may traverse (e.g. under /var/lib or /tmp), or give a --database-url",
				acct.name, dataDir, dir, fi.Mode().Perm(), st.Uid)
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

func containsID(ids []uint32, id uint32) bool {
	for _, v := range ids {
		if v == id {
			return true
		}
	}
	return false
}

// dataDirMajor returns the major version that initialised dataDir, or 0 when it is not
// initialised yet. A directory that holds other files is refused rather than initialised over.
func dataDirMajor(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION"))
	if err == nil {
		major, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return 0, fmt.Errorf("pglocal: %s/PG_VERSION is unreadable: %q", dataDir, b)
		}
		return major, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("pglocal: %w", err)
	}
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return 0, fmt.Errorf("pglocal: %w", err)
	}
	if len(entries) > 0 {
		return 0, fmt.Errorf("pglocal: %s is neither empty nor a PostgreSQL data directory (no PG_VERSION); move its contents away or choose another directory", dataDir)
	}
	return 0, nil
}

func initdb(ctx context.Context, bins Binaries, dataDir string, acct account, opts Options) error {
	opts.Log.Info("initialising PostgreSQL data directory", "dir", dataDir, "initdb", bins.Initdb, "user", acct.name)
	args := []string{
		"-D", dataDir,
		"-U", superuser, // the same role name whatever the OS user, so URLs never vary
		"--auth=trust",
		"--encoding=UTF8",
		"--locale=C", // independent of the host's locales, and the fastest collation
	}
	if !opts.Durable {
		args = append(args, "--no-sync")
	}
	cmd := command(ctx, bins.Initdb, args, acct, opts.Throwaway)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pglocal: initdb %s as user %s: %w\n%s", dataDir, acct.name, err, tail(out.Bytes(), 20))
	}
	return nil
}

// command prepares a server program to run as acct, in its own process group so that a
// Ctrl-C in the terminal reaches arbiter alone, which then stops the server in its own order.
func command(ctx context.Context, path string, args []string, acct account, throwaway bool) *exec.Cmd {
	var cmd *exec.Cmd
	if ctx != nil {
		cmd = exec.CommandContext(ctx, path, args...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = "/" // the working directory of root (e.g. /root) may be closed to acct
	cmd.Env = serverEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: acct.credential}
	if throwaway {
		// Go applies Credential before Pdeathsig, so the kernel does not reset it on setuid.
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	return cmd
}

// serverEnv is this process's environment without PG* variables, which would otherwise
// change defaults of initdb and postgres (PGDATA, PGPORT, ...) behind the flags given here.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

// clearPostmasterPID deals with a postmaster.pid left by an earlier run; see the package doc.
func clearPostmasterPID(dataDir string, opts Options) error {
	pidPath := filepath.Join(dataDir, "postmaster.pid")
	b, err := os.ReadFile(pidPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if pid > 0 && isPostgresOf(pid, dataDir) {
		opts.Log.Info("stopping PostgreSQL left running by an earlier run", "pid", pid, "dir", dataDir)
		if err := stopForeign(pid, pidPath, opts.StopTimeout); err != nil {
			return err
		}
	}
	// postgres itself would refuse to start while the pid in the file is alive, even when the
	// pid now belongs to an unrelated process (pids are reused after a reboot).
	switch err := os.Remove(pidPath); {
	case err == nil:
		opts.Log.Info("removed stale postmaster.pid", "pid", pid, "dir", dataDir)
	case !errors.Is(err, os.ErrNotExist): // a server stopped above removes it itself
		return fmt.Errorf("pglocal: remove stale %s: %w", pidPath, err)
	}
	return nil
}

// isPostgresOf tells whether pid is a live postmaster serving dataDir: postgres runs with its
// data directory as working directory, which /proc shows.
func isPostgresOf(pid int, dataDir string) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	if base := filepath.Base(strings.TrimSuffix(exe, " (deleted)")); base != "postgres" && base != "postmaster" {
		return false
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	return err == nil && filepath.Clean(cwd) == filepath.Clean(dataDir)
}

// stopForeign asks a postmaster that is not our child for a fast shutdown and waits for it.
func stopForeign(pid int, pidPath string, timeout time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
		return fmt.Errorf("pglocal: stop the PostgreSQL (pid %d) left running on this data directory: %w", pid, err)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("pglocal: the PostgreSQL (pid %d) left running on this data directory did not stop within %s; stop it by hand", pid, timeout)
}

// freePort asks the kernel for a free loopback port. Another process may take it before
// postgres binds it; launch reports that as errPortTaken and Start tries another.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var errPortTaken = errors.New("port taken")

func launch(ctx context.Context, bins Binaries, dataDir string, port int, acct account, opts Options) (*Server, error) {
	logPath := filepath.Join(dataDir, logFileName)
	// Keep the previous run's log: it may explain why that run ended.
	os.Rename(logPath, logPath+".1")
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pglocal: %w", err)
	}
	defer logFile.Close() // the child holds its own copy of the descriptor
	if c := acct.credential; c != nil {
		os.Chown(logPath, int(c.Uid), int(c.Gid))
	}

	socketDir := dataDir
	if len(socketDir)+len("/.s.PGSQL.65535.lock") > maxSocketPath {
		socketDir = "" // the path would be too long for a Unix socket: TCP only
	}
	args := []string{
		"-D", dataDir,
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=" + socketDir,
		"-c", "max_connections=" + strconv.Itoa(opts.MaxConnections),
		"-c", "shared_buffers=32MB",
		"-c", "logging_collector=off",
	}
	if !opts.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	// No ctx here: the server outlives Start, until Stop.
	cmd := command(nil, bins.Postgres, args, acct, opts.Throwaway)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pglocal: start %s: %w", bins.Postgres, err)
	}
	s := &Server{
		dataDir:     dataDir,
		port:        port,
		database:    opts.Database,
		throwaway:   opts.Throwaway,
		stopTimeout: opts.StopTimeout,
		log:         opts.Log,
		cmd:         cmd,
		exited:      make(chan struct{}),
		stopping:    make(chan struct{}),
	}
	go s.wait()

	if err := s.waitReady(ctx); err != nil {
		s.throwaway = false // keep the data directory for the next attempt; Start removes it at the end
		s.Stop()
		return nil, err
	}
	s.ready.Store(true)
	return s, nil
}

func (s *Server) wait() {
	s.waitErr = s.cmd.Wait()
	close(s.exited)
	select {
	case <-s.stopping:
	default:
		if !s.ready.Load() {
			return // waitReady reports it
		}
		s.log.Error("PostgreSQL exited unexpectedly", "err", s.waitErr, "log", s.LogPath(), "tail", string(tail(s.readLog(), 10)))
	}
}

// waitReady polls until the server accepts connections, and fails early with the tail of its
// log if it exits first.
func (s *Server) waitReady(ctx context.Context) error {
	for {
		select {
		case <-s.exited:
			log := s.readLog()
			if bytes.Contains(log, []byte("could not create any TCP/IP sockets")) || bytes.Contains(log, []byte("Address already in use")) {
				return errPortTaken
			}
			return fmt.Errorf("pglocal: postgres exited during start (%v); %s ends with:\n%s", s.waitErr, s.LogPath(), tail(log, 20))
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

// ping connects and checks that the server answering on the port is this one: if postgres
// lost the race for the port, another server may be listening there.
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
		return fmt.Errorf("port %d is served by another PostgreSQL (data directory %s)", s.port, dir)
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

// URL returns the connection URL of database dbname on this server; "" means the database
// created by Start (Options.Database).
func (s *Server) URL(dbname string) string {
	if dbname == "" {
		dbname = s.database
	}
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(superuser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path:     "/" + dbname,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port is the TCP port the server listens on (on 127.0.0.1).
func (s *Server) Port() int { return s.port }

// DataDir is the absolute path of the data directory.
func (s *Server) DataDir() string { return s.dataDir }

// LogPath is the file that receives the server's output.
func (s *Server) LogPath() string { return filepath.Join(s.dataDir, logFileName) }

// Done is closed when the server process has exited, whether through Stop or not.
func (s *Server) Done() <-chan struct{} { return s.exited }

// Stop shuts the server down (fast shutdown: open transactions are rolled back), kills it if
// it has not exited within Options.StopTimeout, and removes a throwaway data directory.
// It is safe to call more than once and from several goroutines.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		close(s.stopping)
		s.stopErr = s.stop()
	})
	return s.stopErr
}

func (s *Server) stop() error {
	var err error
	select {
	case <-s.exited:
	default:
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(s.stopTimeout):
			s.cmd.Process.Kill()
			<-s.exited
			err = fmt.Errorf("pglocal: postgres did not shut down within %s and was killed", s.stopTimeout)
		}
	}
	if s.throwaway {
		if rmErr := os.RemoveAll(s.dataDir); rmErr != nil && err == nil {
			err = fmt.Errorf("pglocal: remove %s: %w", s.dataDir, rmErr)
		}
	}
	return err
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
