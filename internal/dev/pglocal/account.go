package pglocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// account is the operating-system user initdb and postgres run as.
type account struct {
	name       string
	credential *syscall.Credential // nil: run as this process's user
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
