// Package e2e runs Arbiter whole — the arbiter serve composition root, a real PostgreSQL,
// a real browser and (where a test needs it) the local Kubernetes control plane.
package e2e

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/server"
)

func TestMain(m *testing.M) { testdb.Main(m, stopSharedCluster) }

// arbiter is a running `arbiter serve`.
type arbiter struct {
	URL   string
	stop  func()
	token string // an admin API key, made on first use by do
}

// startArbiter runs server.Serve with cfg (address and logging filled in) until the test ends
// or stop is called.
func startArbiter(t *testing.T, cfg server.Config) *arbiter {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Kubeconfig == "" {
		cfg.Kubeconfig = server.NoCluster // tests that schedule pass the shared cluster's kubeconfig
	}
	if cfg.SchedulerName == "" {
		cfg.SchedulerName = "arbiter"
	}
	if cfg.OIDCIssuer == "" && cfg.AdminPassword == "" {
		cfg.AdminPassword = adminPassword // the bootstrap admin the helpers sign in as
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, cfg, log, io.Discard, ready) }()
	a := &arbiter{}
	select {
	case a.URL = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("arbiter serve stopped before serving: %v", err)
	case <-time.After(3 * time.Minute):
		cancel()
		t.Fatal("arbiter serve did not start within 3 minutes")
	}
	var once bool
	a.stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("arbiter serve ended with %v", err)
		}
	}
	t.Cleanup(a.stop)
	return a
}

// testWriter sends the server's log lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// do calls the API as the admin (with an API key adminToken created).
func (a *arbiter) do(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, a.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+a.adminToken(t))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// artifactDir is where browser tests leave screenshots (ARBITER_ARTIFACTS, else ./artifacts
// at the top of the repository).
func artifactDir(t *testing.T) string {
	dir := os.Getenv("ARBITER_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// freshDatabase gives a test its own migrated database.
func freshDatabase(t *testing.T) string { return testdb.NewURL(t) }
