package lifecycle

import (
	"testing"

	"github.com/arbiterhq/arbiter/internal/testkit/purity"
)

// The lifecycle is decided as purely as the core (scheduler's TestPureDependencies): it may
// use the standard library's pure packages and the core, nothing that does I/O.
func TestPureDependencies(t *testing.T) {
	deps, err := purity.Deps()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	allowed := []string{"github.com/arbiterhq/arbiter/scheduler", "github.com/arbiterhq/arbiter/scheduler/lifecycle"}
	for _, d := range purity.Impure(deps, allowed) {
		t.Errorf("package lifecycle must not depend on %s (it decides; server writes)", d)
	}
}
