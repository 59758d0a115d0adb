// Kueue's own scalability harness (test/performance/scheduler in its module), which the
// benchmarks run as published to calibrate this machine against Kueue's figures: its runner
// starts envtest's kube-apiserver and etcd, installs Kueue's CRDs, starts minimalkueue (Kueue's
// core controllers and scheduler alone), creates the scenario's cohorts, queues and Workloads,
// finishes each admitted Workload after its runtime, and records when each was admitted.
//
// It is built from hack/operators/kueue-harness, a module of its own pinned to the same Kueue
// release as hack/operators/kueue: the runner needs modules the controller does not, and adding
// them to the controller's go.mod and go.sum would change the controller's stamp and rebuild it
// although not one module it links changes.

package devcluster

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// The harness's module under hack/operators and the names of its executables: those of Kueue's
// Makefile, whose runner names the file of minimalkueue's CPU and memory after the executable
// (minimalkueue.stats.yaml).
const (
	kueueHarnessModule       = "kueue-harness"
	kueueHarnessRunner       = "performance-scheduler-runner"
	kueueHarnessMinimalKueue = "minimalkueue"
)

// kueueHarness are the harness's executables, built like an operator. The runner carries the
// module's CRDs and scenario configurations (configs/<name>/generator.yaml and rangespec.yaml).
var kueueHarness = []operator{
	{
		name: kueueHarnessRunner, module: "sigs.k8s.io/kueue", pkg: "sigs.k8s.io/kueue/test/performance/scheduler/runner",
		crdDirs:   []string{"config/components/crd/bases"},
		assetDirs: []string{"test/performance/scheduler/configs"},
		hint:      "~2 min after Kueue's own build",
	},
	{
		name: kueueHarnessMinimalKueue, module: "sigs.k8s.io/kueue", pkg: "sigs.k8s.io/kueue/test/performance/scheduler/minimalkueue",
		hint: "~1 min after Kueue's own build",
	},
}

// KueueHarness locates the built harness:
// $XDG_CACHE_HOME/arbiter/k8s/operators/kueue-harness/<version>.
type KueueHarness struct {
	Version string // the Kueue release, e.g. "v0.19.2"
	Dir     string
}

// Runner returns the runner's executable.
func (h *KueueHarness) Runner() string { return filepath.Join(h.Dir, kueueHarnessRunner) }

// MinimalKueue returns minimalkueue's executable.
func (h *KueueHarness) MinimalKueue() string { return filepath.Join(h.Dir, kueueHarnessMinimalKueue) }

// CRDDir returns the directory of Kueue's CRDs, all versions, as the runner installs them.
func (h *KueueHarness) CRDDir() string { return filepath.Join(h.Dir, "crds") }

// Scenario returns the directory of one of the module's scenarios ("baseline", "large-scale",
// "tas"), holding its generator.yaml and rangespec.yaml.
func (h *KueueHarness) Scenario(name string) string { return filepath.Join(h.Dir, "configs", name) }

// EnsureKueueHarness builds Kueue's harness into the cache when missing or built from another
// pin, printing progress to progress (may be nil). `--operators kueue` builds it with Kueue.
func EnsureKueueHarness(ctx context.Context, progress io.Writer) (*KueueHarness, error) {
	if progress == nil {
		progress = io.Discard
	}
	src, err := operatorSource()
	if err != nil {
		return nil, err
	}
	root, err := CacheRoot()
	if err != nil {
		return nil, err
	}
	modDir := filepath.Join(src, kueueHarnessModule)
	version, err := requiredVersion(filepath.Join(modDir, "go.mod"), "sigs.k8s.io/kueue")
	if err != nil {
		return nil, err
	}
	h := &KueueHarness{Version: version, Dir: filepath.Join(root, "operators", kueueHarnessModule, version)}
	for _, op := range kueueHarness {
		b := &OperatorBinaries{Name: op.name, Version: version, Dir: h.Dir}
		if err := ensureOperator(ctx, op, modDir, b, progress); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// copyTree replaces dst with a copy of the directory src, made writable (the module cache is
// read-only).
func copyTree(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
