package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

const stallAdminPassword = "stall-test-admin-password"

// `arbiter serve` on its private PostgreSQL, without a cluster, under faults: a client that
// trickles its request, a database frozen (SIGSTOP) and thawed (SIGCONT), a postmaster killed.
// One server for all (a durable initdb takes seconds), the faults one after another.
func TestServeUnderFaults(t *testing.T) {
	a := startServe(t, Config{DatabaseTimeout: 2 * time.Second, HTTPReadTimeout: 2 * time.Second})
	t.Run("slow body", func(t *testing.T) { slowBodyDoesNotHoldAConnection(t, a) })
	t.Run("stalled and killed database", func(t *testing.T) { stalledAndKilledDatabase(t, a) })
}

// A stalled database never hangs a request: /healthz answers, /readyz, pages and the API
// answer 503 within seconds, and all answer normally soon after the database does, without a
// restart. A killed postmaster is restarted, and everything answers normally again.
func stalledAndKilledDatabase(t *testing.T, a *served) {
	client := a.signIn(t)
	token := a.apiKey(t, client)
	anon := &http.Client{Timeout: 30 * time.Second}

	type probe struct {
		name   string
		client *http.Client
		path   string
		bearer bool
	}
	probes := []probe{
		{"/healthz", anon, "/healthz", false},
		{"/readyz", anon, "/readyz", false},
		{"GET /login, anonymous", anon, "/login", false},
		{"GET /login with a session", client, "/login", false},
		{"a signed-in console page", client, "/node-pools", false},
		{"an API call", anon, "/api/v1/node-pools", true},
	}
	call := func(p probe) (int, string, time.Duration, error) {
		req, _ := http.NewRequest(http.MethodGet, a.url+p.path, nil)
		if p.bearer {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		began := time.Now()
		res, err := p.client.Do(req)
		if err != nil {
			return 0, "", time.Since(began), err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), time.Since(began), nil
	}
	allNormal := func(when string) {
		t.Helper()
		began := time.Now()
		poll.UntilNil(t, when+": every probe answers normally", 30*time.Second, func() error {
			for _, p := range probes {
				if status, body, _, err := call(p); err != nil || status != http.StatusOK {
					return fmt.Errorf("%s answers %d (%v): %.200s", p.name, status, err, body)
				}
			}
			return nil
		})
		t.Logf("%s: everything answers normally after %s", when, time.Since(began).Round(10*time.Millisecond))
	}
	allNormal("before the stall")

	freeze(t, a.pgDir)
	// Each must answer within 10 s (the database timeout is 2 s, /readyz's ping 2 s).
	for _, p := range probes {
		status, body, took, err := call(p)
		if err != nil {
			t.Errorf("%s with the database frozen: %v after %s", p.name, err, took)
			continue
		}
		t.Logf("%s with the database frozen: %d in %s", p.name, status, took.Round(10*time.Millisecond))
		if took > 10*time.Second {
			t.Errorf("%s took %s to answer", p.name, took)
		}
		switch p.name {
		case "/healthz":
			if status != http.StatusOK {
				t.Errorf("/healthz = %d, want 200: it needs no database", status)
			}
		case "GET /login, anonymous":
			// It needs no database to show the form; whether it can store a session or
			// answers 503 is the login page's business: it only must not hang.
			if status != http.StatusOK && status != http.StatusServiceUnavailable {
				t.Errorf("%s = %d: %.300s", p.name, status, body)
			}
		case "an API call":
			if status != http.StatusServiceUnavailable || !strings.Contains(body, `"message":"the database is unavailable`) {
				t.Errorf("%s = %d %.300s, want 503 with the database sentence", p.name, status, body)
			}
		case "/readyz":
			if status != http.StatusServiceUnavailable {
				t.Errorf("/readyz = %d, want 503", status)
			}
		default:
			if status != http.StatusServiceUnavailable || !strings.Contains(body, "The database is unavailable. Arbiter keeps scheduling") {
				t.Errorf("%s = %d %.300s, want 503 with the banner", p.name, status, body)
			}
		}
	}
	thaw(t, a.pgDir)
	allNormal("after SIGCONT")

	pid := postmasterPID(t, a.pgDir)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed the postmaster (pid %d)", pid)
	// Its orphaned backends may still answer for a moment on the pool's open connections, so
	// the pages are checked once a new postmaster has started, which Arbiter must do itself.
	poll.UntilNil(t, "postmaster.pid names a new postmaster", time.Minute, func() error {
		b, err := os.ReadFile(filepath.Join(a.pgDir, "postmaster.pid"))
		if err != nil {
			return err
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if now, _ := strconv.Atoi(strings.TrimSpace(first)); now == 0 || now == pid {
			return fmt.Errorf("postmaster.pid names %q, the killed one was %d", first, pid)
		}
		return nil
	})
	allNormal("after the postmaster was killed and started again")
}

// A client that announces a body and sends only part of it loses its connection after the
// read timeout; it does not hold it.
func slowBodyDoesNotHoldAConnection(t *testing.T, a *served) {
	addr := strings.TrimPrefix(a.url, "http://")
	for _, path := range []string{"/login", "/api/v1/node-pools"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nx", path, addr)
		began := time.Now()
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err = io.Copy(io.Discard, conn) // until the server closes the connection
		took := time.Since(began)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("POST %s with 1 of 1000 bytes: the connection is still open after %s", path, took)
		}
		t.Logf("POST %s with 1 of 1000 bytes: closed after %s (%v)", path, took.Round(10*time.Millisecond), err)
		if took > 15*time.Second {
			t.Errorf("POST %s: the connection was held %s with a 2 s read timeout", path, took)
		}
	}
}

func TestHTTPServerTimeouts(t *testing.T) {
	srv := httpServer(http.NotFoundHandler(), Config{})
	if srv.ReadHeaderTimeout != httpReadHeaderTimeout || srv.ReadTimeout != DefaultHTTPReadTimeout ||
		srv.WriteTimeout != DefaultHTTPWriteTimeout || srv.IdleTimeout != DefaultHTTPIdleTimeout {
		t.Errorf("timeouts header %s read %s write %s idle %s, want the defaults", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
	c, err := ParseConfig("serve", []string{"--database-timeout=3s", "--http-read-timeout=7s"}, io.Discard)
	if err != nil || c.DatabaseTimeout != 3*time.Second || c.HTTPReadTimeout != 7*time.Second {
		t.Errorf("ParseConfig = %+v, %v", c, err)
	}
	t.Setenv("ARBITER_DATABASE_TIMEOUT", "4s")
	if c, err := ParseConfig("serve", nil, io.Discard); err != nil || c.DatabaseTimeout != 4*time.Second {
		t.Errorf("ARBITER_DATABASE_TIMEOUT=4s gave %s, %v", c.DatabaseTimeout, err)
	}
}

// served is an `arbiter serve` on its own private PostgreSQL, without a cluster.
type served struct {
	url   string
	pgDir string // the private PostgreSQL's data directory
}

func startServe(t *testing.T, c Config) *served {
	t.Helper()
	// The data directory's parents must be traversable by the postgres user when root runs this.
	dir, err := os.MkdirTemp("", "arbiter-serve-test-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	c.Addr, c.DataDir, c.Kubeconfig, c.AdminPassword = "127.0.0.1:0", dir, NoCluster, stallAdminPassword
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- Serve(ctx, c, log, io.Discard, ready) }()
	s := &served{pgDir: filepath.Join(dir, "postgres")}
	select {
	case s.url = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve stopped before serving: %v", err)
	case <-time.After(3 * time.Minute):
		cancel()
		t.Fatal("serve did not start within 3 minutes")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve ended with %v", err)
		}
	})
	return s
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

func csrfIn(t *testing.T, client *http.Client, u string) string {
	t.Helper()
	res, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := csrfField.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no CSRF token in %s: %.300s", u, b)
	}
	return html.UnescapeString(string(m[1]))
}

// signIn signs in as the bootstrap admin and returns a client holding the session.
func (s *served) signIn(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	res, err := client.PostForm(s.url+"/login", url.Values{"_csrf": {csrfIn(t, client, s.url+"/login")}, "username": {"admin"}, "password": {stallAdminPassword}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Request.URL.Path == "/login" {
		t.Fatalf("signing in answered %d at %s", res.StatusCode, res.Request.URL)
	}
	return client
}

// apiKey creates an admin API key on the Access page and returns its token.
func (s *served) apiKey(t *testing.T, client *http.Client) string {
	t.Helper()
	res, err := client.PostForm(s.url+"/access/keys", url.Values{"_csrf": {csrfIn(t, client, s.url+"/access")},
		"name": {"stall-test"}, "role": {"admin"}, "scopeType": {"system"}, "days": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := regexp.MustCompile(`id="new-key-token">([^<]+)<`).FindSubmatch(b)
	if res.StatusCode != http.StatusCreated || m == nil {
		t.Fatalf("creating an API key answered %d: %.300s", res.StatusCode, b)
	}
	return html.UnescapeString(string(m[1]))
}

// postmasterPID reads the pid of the running postmaster of a data directory.
func postmasterPID(t *testing.T, dataDir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// serverProcesses is the postmaster of dataDir and its children (the backends and the
// background processes).
func serverProcesses(t *testing.T, dataDir string) []int {
	t.Helper()
	pm := postmasterPID(t, dataDir)
	pids := []int{pm}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := os.Open(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "PPid:"); ok {
				if ppid, _ := strconv.Atoi(strings.TrimSpace(v)); ppid == pm {
					pids = append(pids, pid)
				}
				break
			}
		}
		f.Close()
	}
	return pids
}

// freeze stops the server's processes (SIGSTOP) and makes sure they continue when the test
// ends, whatever happens.
func freeze(t *testing.T, dataDir string) {
	t.Helper()
	pids := serverProcesses(t, dataDir)
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP %d: %v", pid, err)
		}
	}
	t.Logf("froze PostgreSQL: postmaster and %d children", len(pids)-1)
}

func thaw(t *testing.T, dataDir string) {
	t.Helper()
	for _, pid := range serverProcesses(t, dataDir) {
		syscall.Kill(pid, syscall.SIGCONT)
	}
}
