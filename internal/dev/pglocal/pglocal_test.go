package pglocal

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// traversableTempDir returns a directory the postgres user can reach when the tests run as
// root: t.TempDir() is 0700 and owned by root, which is exactly what pglocal refuses.
func traversableTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(throwawayParent(), "pglocal-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func startForTest(t *testing.T, opts Options) *Server {
	t.Helper()
	opts.Log = testLogger(t)
	s, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestThrowaway(t *testing.T) {
	t.Parallel()
	began := time.Now()
	s := startForTest(t, Options{Throwaway: true})
	t.Logf("throwaway server ready in %s at %s", time.Since(began), s.URL(""))

	if want := "postgres://postgres@/arbiter?host=" + url.QueryEscape(s.SocketDir()) + "&port=5432&sslmode=disable"; s.URL("") != want {
		t.Errorf("URL(\"\") = %s, want %s", s.URL(""), want)
	}
	var one int
	if err := connect(t, s.URL("")).QueryRow(t.Context(), "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1 = %d, %v", one, err)
	}
	// Speed over crash safety, for tests only.
	for setting, want := range map[string]string{"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"} {
		if got := show(t, s, setting); got != want {
			t.Errorf("%s = %q on a throwaway instance, want %q", setting, got, want)
		}
	}

	dir := s.DataDir()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("throwaway data directory %s still exists after Stop (stat: %v)", dir, err)
	}
}

func TestPersistentKeepsDataAcrossRestarts(t *testing.T) {
	t.Parallel()
	// Missing parents too, as for serve's default ./.arbiter/pg on a first run.
	dir := filepath.Join(traversableTempDir(t), ".arbiter", "pg")

	first := startForTest(t, Options{Dir: dir, Database: "keep"})
	if _, err := connect(t, first.URL("")).Exec(t.Context(), "create table kept(v text); insert into kept values ('still here')"); err != nil {
		t.Fatal(err)
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}

	second := startForTest(t, Options{Dir: dir, Database: "keep"})
	var v string
	if err := connect(t, second.URL("")).QueryRow(t.Context(), "select v from kept").Scan(&v); err != nil || v != "still here" {
		t.Fatalf("after restart: kept.v = %q, %v", v, err)
	}
	if _, err := os.Stat(filepath.Join(dir, logFileName+".1")); err != nil {
		t.Errorf("the first run's log was not kept: %v", err)
	}
}

func TestStalePostmasterPID(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(traversableTempDir(t), "pg")
	first := startForTest(t, Options{Dir: dir})
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}

	// A pid file as a crashed server leaves it, naming a process that no longer exists.
	dead := deadPID(t)
	pidFile := filepath.Join(dir, "postmaster.pid")
	content := strconv.Itoa(dead) + "\n" + dir + "\n1700000000\n5432\n/tmp\n127.0.0.1\n  5432001    32768\nready   \n"
	if err := os.WriteFile(pidFile, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}

	second := startForTest(t, Options{Dir: dir})
	var one int
	if err := connect(t, second.URL("")).QueryRow(t.Context(), "select 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
}

func TestStopsServerLeftRunning(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(traversableTempDir(t), "pg")
	orphan := startForTest(t, Options{Dir: dir})
	// Forget about the first server as if the process that started it had been killed.
	orphan.stopOnce.Do(func() { close(orphan.stopping) })
	<-orphan.supervised
	orphanProc := orphan.proc

	second := startForTest(t, Options{Dir: dir})
	select {
	case <-orphanProc.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the server left running was not stopped")
	}
	var one int
	if err := connect(t, second.URL("")).QueryRow(t.Context(), "select 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
}

func TestMissingBinaries(t *testing.T) {
	// Not parallel: it changes PATH and the package's search directory.
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	saved := postgresqlLibDir
	postgresqlLibDir = empty
	t.Cleanup(func() { postgresqlLibDir = saved })

	if _, err := FindBinaries(); !errors.Is(err, ErrNoBinaries) {
		t.Errorf("FindBinaries() error = %v, want ErrNoBinaries", err)
	}
	_, err := Start(t.Context(), Options{Throwaway: true})
	if !errors.Is(err, ErrNoBinaries) || !strings.Contains(err.Error(), "apt-get install -y postgresql") {
		t.Errorf("Start() error = %v, want ErrNoBinaries telling what to install", err)
	}
}

func TestUntraversableParentIsRefusedClearly(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root hands the server to another user")
	}
	closed := t.TempDir() // 0700, owned by root
	_, err := Start(t.Context(), Options{Dir: filepath.Join(closed, "pg"), Log: testLogger(t)})
	if err == nil || !strings.Contains(err.Error(), "cannot reach") {
		t.Fatalf("Start() error = %v, want one naming the directory the postgres user cannot traverse", err)
	}
}

func TestFindBinariesPrefersHighestVersion(t *testing.T) {
	// Not parallel: it changes PATH and the package's search directory.
	lib := t.TempDir()
	for _, v := range []string{"9.6", "13", "16"} {
		bin := filepath.Join(lib, v, "bin")
		os.MkdirAll(bin, 0o755)
		for _, name := range []string{"initdb", "postgres"} {
			os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755)
		}
	}
	t.Setenv("PATH", t.TempDir())
	saved := postgresqlLibDir
	postgresqlLibDir = lib
	t.Cleanup(func() { postgresqlLibDir = saved })

	b, err := FindBinaries()
	if err != nil || b.Major != 16 || b.Initdb != filepath.Join(lib, "16", "bin", "initdb") {
		t.Fatalf("FindBinaries() = %+v, %v; want version 16", b, err)
	}
	if b, err := binariesFor(13); err != nil || b.Major != 13 {
		t.Errorf("binariesFor(13) = %+v, %v; want the matching version", b, err)
	}
	if _, err := binariesFor(12); err == nil {
		t.Error("binariesFor(12) succeeded with no version 12 installed")
	}
}

// deadPID runs a short-lived program and returns its pid, which no process has any more.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/usr/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	if err := syscall.Kill(p.Pid, 0); err == nil {
		t.Fatalf("pid %d is still alive", p.Pid)
	}
	return p.Pid
}

func show(t *testing.T, s *Server, setting string) string {
	t.Helper()
	var v string
	if err := connect(t, s.URL("postgres")).QueryRow(t.Context(), "show "+setting).Scan(&v); err != nil {
		t.Fatalf("show %s: %v", setting, err)
	}
	return v
}
