// Package purity checks that a decision package stays pure (docs/architecture.md "Shape"):
// nothing that talks to Kubernetes, PostgreSQL, HTTP, the file system or the network, directly
// or through a dependency. The decision packages' tests call it.
package purity

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// ioPackages are standard packages that do I/O.
var ioPackages = []string{"os", "os/exec", "os/signal", "net", "database/sql", "log", "log/slog",
	"io/ioutil", "path/filepath", "io/fs", "crypto/tls", "plugin"}

// ownPure are the project's own packages a decision package may use: english, its grammar
// for sentences (Plural), and prefetch, a hint to the processor's caches. Both are pure and
// use the standard library only.
var ownPure = []string{"github.com/arbiterhq/arbiter/internal/english", "github.com/arbiterhq/arbiter/internal/prefetch"}

// Impure returns the dependencies that break purity: anything outside the standard library
// (its first path element has a dot) and the standard packages that do I/O, except those
// allowed and ownPure.
func Impure(deps, allowed []string) []string {
	var bad []string
	for _, d := range deps {
		first, _, _ := strings.Cut(d, "/")
		switch {
		case slices.Contains(allowed, d), slices.Contains(ownPure, d):
		case strings.Contains(first, "."):
			bad = append(bad, d)
		case slices.Contains(ioPackages, d), strings.HasPrefix(d, "net/"):
			bad = append(bad, d)
		}
	}
	return bad
}

// Deps lists the package in the current directory and everything it depends on (go list -deps).
func Deps() ([]string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}
