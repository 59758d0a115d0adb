package scheduler

import (
	"slices"
	"testing"

	"github.com/arbiterhq/arbiter/internal/testkit/purity"
)

// The decision core must stay pure (docs/architecture.md "Shape"): nothing that talks to Kubernetes,
// PostgreSQL, HTTP, the file system or the network, directly or through a dependency.

const self = "github.com/arbiterhq/arbiter/scheduler"

func TestPureDependencies(t *testing.T) {
	deps, err := purity.Deps()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if !slices.Contains(deps, self) {
		t.Fatalf("go list did not list %s itself; got %v", self, deps)
	}
	if bad := purity.Impure(deps, []string{self}); len(bad) > 0 {
		t.Errorf("package scheduler must not depend on %v (it decides; scheduler/kube does the I/O)", bad)
	}
}

// The check itself must be able to fail.
func TestImpureDepsDetects(t *testing.T) {
	deps := []string{"strings", "time", self, "github.com/arbiterhq/arbiter/internal/english",
		"k8s.io/client-go/kubernetes", "github.com/jackc/pgx/v5", "github.com/labstack/echo/v4", "net/http", "os"}
	want := []string{"k8s.io/client-go/kubernetes", "github.com/jackc/pgx/v5", "github.com/labstack/echo/v4", "net/http", "os"}
	if got := purity.Impure(deps, []string{self}); !slices.Equal(got, want) {
		t.Errorf("Impure = %v, want %v", got, want)
	}
}
