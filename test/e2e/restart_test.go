package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
)

// TestChangeSurvivesRestart runs `arbiter serve` on its embedded defaults (a private
// PostgreSQL in the data dir), follows the Run:ai procedure, restarts, and finds the change.
func TestChangeSurvivesRestart(t *testing.T) {
	t.Parallel()
	// Under /tmp, not t.TempDir(): the private server runs as the postgres user, which must be
	// able to reach the data dir.
	dataDir, err := os.MkdirTemp("", "arbiter-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dataDir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	cfg := server.Config{DataDir: dataDir}

	a := startArbiter(t, cfg)
	tfjob := "/api/v1/workload-types/" + store.SeedID("workload-type", "kubeflow.org/TFJob").String()
	veryHigh := store.SeedID("priority", "very-high").String()
	status, got := a.do(t, "PUT", tfjob, `{"priorityId":"`+veryHigh+`"}`)
	if status != 200 || got["effectivePriorityName"] != "very-high" {
		t.Fatalf("PUT = %d %v", status, got)
	}
	a.stop()
	if _, err := os.Stat(filepath.Join(dataDir, "postgres", "PG_VERSION")); err != nil {
		t.Fatalf("the private database is not in the data dir: %v", err)
	}

	b := startArbiter(t, cfg)
	status, got = b.do(t, "GET", tfjob, "")
	if status != 200 || got["priorityId"] != veryHigh || got["effectivePriorityName"] != "very-high" {
		t.Fatalf("after restart TFJob is %d %v", status, got)
	}
}
