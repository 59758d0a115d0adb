// Package servetest runs the whole product, server.Serve, inside a test: the tests of what a
// deployment or a script sees (test/deploy, test/runai) start it the way `arbiter serve` does.
package servetest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/server"
)

// Serve runs server.Serve with cfg until the test ends (a failed stop fails the test) and
// returns the URL it serves.
func Serve(t *testing.T, cfg server.Config, log *slog.Logger) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- server.Serve(ctx, cfg, log, io.Discard, ready) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("arbiter serve ended with %v", err)
		}
	})
	select {
	case url := <-ready:
		return url
	case err := <-done:
		t.Fatalf("arbiter serve stopped before serving: %v", err)
	case <-time.After(3 * time.Minute):
		t.Fatal("arbiter serve did not start within 3 minutes")
	}
	return ""
}
