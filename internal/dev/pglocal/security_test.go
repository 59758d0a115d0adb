package pglocal

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

func TestPersistentIsDurable(t *testing.T) {
	t.Parallel()
	s := startForTest(t, Options{Dir: filepath.Join(traversableTempDir(t), "pg")})
	for _, setting := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		if got := show(t, s, setting); got != "on" {
			t.Errorf("%s = %q on a persistent instance, want on (PostgreSQL's durable default)", setting, got)
		}
	}
}

// The server must not be reachable over TCP at all, and its socket only through a 0700
// directory; a data directory of an earlier version that trusted 127.0.0.1 is upgraded.
func TestOnlyAPrivateSocketAdmits(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(traversableTempDir(t), "pg")
	first := startForTest(t, Options{Dir: dir})
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	// pg_hba.conf as initdb --auth=trust wrote it for earlier versions.
	old := "local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n"
	if err := os.WriteFile(filepath.Join(dir, "pg_hba.conf"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, socketSubdir), 0o755) // loosened by hand: tightened again at start

	s := startForTest(t, Options{Dir: dir})
	if got := show(t, s, "listen_addresses"); got != "" {
		t.Errorf("listen_addresses = %q, want '' (no TCP)", got)
	}
	if l := tcpListeners(t, s.PID()); len(l) > 0 {
		t.Errorf("the postmaster listens on TCP: %v", l)
	}
	hba, err := os.ReadFile(filepath.Join(dir, "pg_hba.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(hba), "host") || string(hba) != hbaConf {
		t.Errorf("pg_hba.conf was not rewritten:\n%s", hba)
	}
	for path, want := range map[string]os.FileMode{
		s.SocketDir():                     0o700 | os.ModeDir,
		dir:                               0o700 | os.ModeDir,
		filepath.Join(dir, "pg_hba.conf"): 0o600,
	} {
		if fi, err := os.Stat(path); err != nil || fi.Mode()&(os.ModeType|os.ModePerm) != want {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode(), err, want)
		}
	}
	if s.SocketDir() != filepath.Join(dir, socketSubdir) {
		t.Errorf("socket directory %s, want %s", s.SocketDir(), filepath.Join(dir, socketSubdir))
	}
}

func TestLongDataDirGetsAPrivateSocketDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(traversableTempDir(t), strings.Repeat("d", 100), "pg")
	s := startForTest(t, Options{Dir: dir})
	sock := s.SocketDir()
	if !strings.HasPrefix(sock, "/tmp/arbiter-pg-socket-") {
		t.Fatalf("socket directory %s, want a private one under /tmp", sock)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v, want mode 0700", sock, fi.Mode(), err)
	}
	show(t, s, "port") // reachable
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the private socket directory %s is left after Stop (%v)", sock, err)
	}
}

// tcpListeners returns the TCP sockets in LISTEN state that process pid holds.
func tcpListeners(t *testing.T, pid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var found []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 9 && fields[3] == "0A" && inodes[fields[9]] {
				found = append(found, table+" "+fields[1])
			}
		}
		f.Close()
	}
	return found
}

func TestRestartsAfterKill(t *testing.T) {
	t.Parallel()
	s := startForTest(t, Options{Dir: filepath.Join(traversableTempDir(t), "pg")})
	url := s.URL("")
	if _, err := connect(t, url).Exec(t.Context(), "create table kept(v text); insert into kept values ('survives')"); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 2; round++ {
		pid := s.PID()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// The log is read only when the wait fails, to show why.
		if !poll.Within(60*time.Second, func() bool { return s.Restarts() >= round }) {
			t.Fatalf("round %d: not restarted within 60 s; log:\n%s", round, tail(s.readLog(), 20))
		}
		if s.PID() == pid || s.PID() == 0 {
			t.Fatalf("round %d: pid %d after restart, was %d", round, s.PID(), pid)
		}
		var v string
		if err := connect(t, url).QueryRow(t.Context(), "select v from kept").Scan(&v); err != nil || v != "survives" {
			t.Fatalf("round %d: after restart kept.v = %q, %v", round, v, err)
		}
	}
}

// Stop during the delay before a restart ends the supervision: no server is left running.
func TestStopWhileRestarting(t *testing.T) {
	t.Parallel()
	s := startForTest(t, Options{Throwaway: true})
	pid := s.PID()
	syscall.Kill(pid, syscall.SIGKILL)
	poll.Until(t, "the killed postmaster is gone", 10*time.Second, func() bool { return syscall.Kill(pid, 0) != nil })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	if p := s.PID(); p != 0 && syscall.Kill(p, 0) == nil {
		t.Errorf("a postmaster (pid %d) runs after Stop", p)
	}
}
