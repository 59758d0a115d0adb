package lifecycle

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The lifecycle is decided as purely as the core (scheduler's TestPureDependencies): it may
// use the standard library's pure packages and the core, nothing that does I/O.
func TestPureDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	allowed := []string{"github.com/arbiterhq/arbiter/scheduler", "github.com/arbiterhq/arbiter/scheduler/lifecycle",
		"github.com/arbiterhq/arbiter/internal/english"}
	io := []string{"os", "os/exec", "os/signal", "net", "database/sql", "log", "log/slog", "io/ioutil", "path/filepath", "io/fs", "crypto/tls", "plugin"}
	for _, d := range strings.Fields(string(out)) {
		first, _, _ := strings.Cut(d, "/")
		if slices.Contains(allowed, d) {
			continue
		}
		if strings.Contains(first, ".") || slices.Contains(io, d) || strings.HasPrefix(d, "net/") {
			t.Errorf("package lifecycle must not depend on %s (it decides; server writes)", d)
		}
	}
}
