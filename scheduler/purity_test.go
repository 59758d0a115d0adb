package scheduler

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The decision core must stay pure (docs/architecture.md "Shape"): nothing that talks to Kubernetes,
// PostgreSQL, HTTP, the file system or the network, directly or through a dependency.

// ioPackages are standard packages that do I/O.
var ioPackages = []string{"os", "os/exec", "os/signal", "net", "database/sql", "log", "log/slog",
	"io/ioutil", "path/filepath", "io/fs", "crypto/tls", "plugin"}

const self = "github.com/arbiterhq/arbiter/scheduler"

// english is the project's grammar for sentences (Plural): pure, standard library only.
const englishPkg = "github.com/arbiterhq/arbiter/internal/english"

// impureDeps returns the dependencies that break purity: anything outside the standard
// library (its first path element has a dot), and the standard packages that do I/O.
func impureDeps(deps []string) []string {
	var bad []string
	for _, d := range deps {
		first, _, _ := strings.Cut(d, "/")
		switch {
		case d == self, d == englishPkg:
		case strings.Contains(first, "."):
			bad = append(bad, d)
		case slices.Contains(ioPackages, d), strings.HasPrefix(d, "net/"):
			bad = append(bad, d)
		}
	}
	return bad
}

func goTool(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func TestPureDependencies(t *testing.T) {
	out, err := exec.Command(goTool(t), "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, self) {
		t.Fatalf("go list did not list %s itself; got %v", self, deps)
	}
	if bad := impureDeps(deps); len(bad) > 0 {
		t.Errorf("package scheduler must not depend on %v (it decides; scheduler/kube does the I/O)", bad)
	}
}

// The check itself must be able to fail.
func TestImpureDepsDetects(t *testing.T) {
	deps := []string{"strings", "time", self, "k8s.io/client-go/kubernetes", "github.com/jackc/pgx/v5",
		"github.com/labstack/echo/v4", "net/http", "os"}
	want := []string{"k8s.io/client-go/kubernetes", "github.com/jackc/pgx/v5", "github.com/labstack/echo/v4", "net/http", "os"}
	if got := impureDeps(deps); !slices.Equal(got, want) {
		t.Errorf("impureDeps = %v, want %v", got, want)
	}
}
