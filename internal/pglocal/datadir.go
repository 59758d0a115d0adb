package pglocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

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
		"--auth=trust", // pg_hba.conf is rewritten at every start (writeHBA)
		"--encoding=UTF8",
		"--locale=C", // independent of the host's locales, and the fastest collation
	}
	if opts.Throwaway {
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

// hbaConf is the whole of pg_hba.conf: Unix-socket connections only. The socket lives in a
// 0700 directory of the server's user, so only that user and root can reach it; no TCP line,
// and no TCP listener either (listen_addresses=”).
const hbaConf = `# Written by Arbiter (internal/dev/pglocal) at every start; edits are lost.
# The server listens on no TCP address, only on a Unix socket in a directory of mode 0700,
# so the file system decides who may connect: the server's own user and root.
local all all trust
`

// writeHBA replaces pg_hba.conf, which also upgrades data directories of earlier versions
// that trusted every connection from 127.0.0.1.
func writeHBA(dataDir string, acct account) error {
	path := filepath.Join(dataDir, "pg_hba.conf")
	if b, err := os.ReadFile(path); err == nil && string(b) == hbaConf {
		return nil
	}
	tmp := path + ".arbiter-new"
	if err := os.WriteFile(tmp, []byte(hbaConf), 0o600); err != nil {
		return fmt.Errorf("pglocal: write pg_hba.conf: %w", err)
	}
	if c := acct.credential; c != nil {
		if err := os.Chown(tmp, int(c.Uid), int(c.Gid)); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("pglocal: write pg_hba.conf: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("pglocal: write pg_hba.conf: %w", err)
	}
	return nil
}

// makeSocketDir prepares the 0700 directory of the server's Unix socket: <data dir>/socket,
// or, when that path is too long for a socket address, a new private directory under /tmp
// (own is then true: Stop removes it).
func makeSocketDir(dataDir string, acct account) (dir string, own bool, err error) {
	dir = filepath.Join(dataDir, socketSubdir)
	if len(dir)+len("/.s.PGSQL.5432.lock") > maxSocketPath {
		if dir, err = os.MkdirTemp("/tmp", "arbiter-pg-socket-"); err != nil {
			return "", false, fmt.Errorf("pglocal: create the socket directory: %w", err)
		}
		own = true
	} else if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", false, fmt.Errorf("pglocal: create the socket directory: %w", err)
	}
	fail := func(err error) (string, bool, error) {
		if own {
			os.RemoveAll(dir)
		}
		return "", false, fmt.Errorf("pglocal: prepare the socket directory %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fail(err)
	}
	if !fi.IsDir() {
		return fail(errors.New("not a directory"))
	}
	if err := os.Chmod(dir, 0o700); err != nil { // also tightens one made otherwise
		return fail(err)
	}
	if c := acct.credential; c != nil {
		if err := os.Chown(dir, int(c.Uid), int(c.Gid)); err != nil {
			return fail(err)
		}
	}
	return dir, own, nil
}
