// Operators of a development cluster: the controllers of the workload kinds teams run (JobSet,
// LeaderWorkerSet, Kubeflow training-operator and Trainer, KubeRay), and Kueue, the queueing
// system the benchmarks compare Arbiter with, built from their Go modules as pinned under
// hack/operators, with the CRDs of the same module versions.

package devcluster

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// The operators a development cluster can run (Options.Operators).
const (
	OperatorJobSet           = "jobset"
	OperatorLWS              = "lws"
	OperatorTrainingOperator = "training-operator"
	OperatorTrainer          = "trainer"
	OperatorKubeRay          = "kuberay"
	OperatorKueue            = "kueue"
)

// AllOperators names every workload operator, in the order they start: what "all" means, what
// `make operators` builds and the tests run.
var AllOperators = []string{OperatorJobSet, OperatorLWS, OperatorTrainingOperator, OperatorTrainer, OperatorKubeRay}

// PeerOperators are the schedulers' peers the benchmarks run against the control plane, started
// after the workload operators and only when named: "all" leaves them out, so that neither
// `make operators` nor the tests build them.
var PeerOperators = []string{OperatorKueue}

// knownOperators is every operator a cluster can run, in start order.
func knownOperators() []string {
	return append(append([]string(nil), AllOperators...), PeerOperators...)
}

// operator says where an operator comes from: its module (pinned by the require line of
// hack/operators/<name>/go.mod), the main package that module's `tool` line names, and the
// directories of the module that hold its CRDs.
type operator struct {
	name     string
	module   string
	pkg      string
	crdDirs  []string
	requires []string // operators it cannot run without
	hint     string   // first build time on 2 cores
	// storageVersionOnly installs each CRD with its storage version alone: the other versions
	// need a conversion webhook reached through an in-cluster Service.
	storageVersionOnly bool
	// assetDirs are further directories of the module copied, by their last element, next to
	// the binary (Kueue's harness reads its scenarios from there).
	assetDirs []string
}

var operators = []operator{
	{
		name: OperatorJobSet, module: "sigs.k8s.io/jobset", pkg: "sigs.k8s.io/jobset",
		crdDirs: []string{"config/components/crd/bases"}, hint: "~6 min",
	},
	{
		name: OperatorLWS, module: "sigs.k8s.io/lws", pkg: "sigs.k8s.io/lws/cmd",
		crdDirs: []string{"config/crd/bases"}, hint: "~3 min",
	},
	{
		name: OperatorTrainingOperator, module: "github.com/kubeflow/training-operator",
		pkg:     "github.com/kubeflow/training-operator/cmd/training-operator.v1",
		crdDirs: []string{"manifests/base/crds"}, hint: "~2 min",
	},
	{
		// Trainer runs a TrainJob as a JobSet: it watches JobSets and needs their controller.
		name: OperatorTrainer, module: "github.com/kubeflow/trainer/v2",
		pkg:     "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager",
		crdDirs: []string{"manifests/base/crds"}, requires: []string{OperatorJobSet}, hint: "~2 min",
	},
	{
		name: OperatorKubeRay, module: "github.com/ray-project/kuberay/ray-operator",
		pkg:     "github.com/ray-project/kuberay/ray-operator",
		crdDirs: []string{"config/crd/bases"}, hint: "~2 min, after jobset",
	},
	{
		name: OperatorKueue, module: "sigs.k8s.io/kueue", pkg: "sigs.k8s.io/kueue/cmd/kueue",
		crdDirs: []string{"config/components/crd/bases"}, hint: "~8 CPU-minutes, 18 min on a busy machine", storageVersionOnly: true,
	},
}

func lookupOperator(name string) (operator, bool) {
	for _, op := range operators {
		if op.name == name {
			return op, true
		}
	}
	return operator{}, false
}

// ParseOperators reads a comma-separated list of operators ("jobset,lws"), adds those they
// require (trainer needs jobset) and returns them in start order, without repeats. "all" names
// every workload operator (AllOperators); a peer (PeerOperators) is run only when named.
func ParseOperators(list string) ([]string, error) {
	var names []string
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
		case f == "all":
			names = append(names, AllOperators...)
		default:
			names = append(names, f)
		}
	}
	return resolveOperators(names)
}

func resolveOperators(names []string) ([]string, error) {
	want := map[string]bool{}
	for _, n := range names {
		op, ok := lookupOperator(n)
		if !ok {
			return nil, fmt.Errorf("devcluster: no operator %q (known: %s)", n, strings.Join(knownOperators(), ", "))
		}
		want[n] = true
		for _, r := range op.requires {
			want[r] = true
		}
	}
	var out []string
	for _, n := range knownOperators() {
		if want[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// OperatorBinaries locates a built operator: its executable and the CRDs of its module.
type OperatorBinaries struct {
	Name    string
	Version string // the module version, e.g. "v0.10.1"
	Dir     string // $XDG_CACHE_HOME/arbiter/k8s/operators/<name>/<version>
}

// Path returns the operator's executable.
func (b *OperatorBinaries) Path() string { return filepath.Join(b.Dir, b.Name) }

// CRDDir returns the directory of the operator's CRD manifests, copied from its module.
func (b *OperatorBinaries) CRDDir() string { return filepath.Join(b.Dir, "crds") }

// operatorSource returns hack/operators, the sibling of hack/k8s (see FindSource).
func operatorSource() (string, error) {
	src, err := FindSource()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(filepath.Dir(src), "operators")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("devcluster: no hack/operators next to %s: %w", src, err)
	}
	return dir, nil
}

// requiredVersion reads the version of module that gomod requires.
func requiredVersion(gomod, module string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 && fields[0] == module {
			return fields[1], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("devcluster: %s does not require %s", gomod, module)
}

// operatorLDFlags are the link flags of every operator build.
const operatorLDFlags = "-s -w"

// operatorStamp hashes what an operator's binary and CRDs are built from: its module's go.mod
// and go.sum, any Go source there, the package, the Go version and the link flags.
func operatorStamp(modDir string, op operator) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n%s\n", op.name, op.pkg, strings.Join(op.crdDirs, ","), runtime.Version(), operatorLDFlags)
	if len(op.assetDirs) > 0 { // only then, so that the stamps of operators without any stay valid
		fmt.Fprintf(h, "assets %s\n", strings.Join(op.assetDirs, ","))
	}
	var files []string
	for _, pat := range []string{"go.mod", "go.sum", "*.go"} {
		m, err := filepath.Glob(filepath.Join(modDir, pat))
		if err != nil {
			return "", err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// EnsureOperators builds the named operators (see ParseOperators) into the cache when missing or
// built from other pins, copying their CRDs from the same module versions, and prints progress
// to progress (may be nil). Each is built in its own module under hack/operators, so no two
// operators, nor Arbiter, have to agree on a dependency. A first build takes a few minutes per
// operator on 2 cores; a cached run takes milliseconds.
func EnsureOperators(ctx context.Context, progress io.Writer, names ...string) ([]*OperatorBinaries, error) {
	if progress == nil {
		progress = io.Discard
	}
	names, err := resolveOperators(names)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	src, err := operatorSource()
	if err != nil {
		return nil, err
	}
	root, err := CacheRoot()
	if err != nil {
		return nil, err
	}
	var out []*OperatorBinaries
	for _, name := range names {
		op, _ := lookupOperator(name)
		modDir := filepath.Join(src, name)
		version, err := requiredVersion(filepath.Join(modDir, "go.mod"), op.module)
		if err != nil {
			return nil, err
		}
		b := &OperatorBinaries{Name: name, Version: version, Dir: filepath.Join(root, "operators", name, version)}
		if err := ensureOperator(ctx, op, modDir, b, progress); err != nil {
			return nil, err
		}
		out = append(out, b)
		if name == OperatorKueue {
			// Kueue's own scalability harness comes with it: `make bench` runs both.
			if _, err := EnsureKueueHarness(ctx, progress); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func ensureOperator(ctx context.Context, op operator, modDir string, b *OperatorBinaries, progress io.Writer) error {
	s, err := operatorStamp(modDir, op)
	if err != nil {
		return fmt.Errorf("devcluster: hashing %s: %w", modDir, err)
	}
	stampPath := b.Path() + ".stamp"
	fresh := func() bool {
		old, _ := os.ReadFile(stampPath)
		return exists(b.Path()) && strings.TrimSpace(string(old)) == s
	}
	if fresh() {
		return nil
	}
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	unlock, err := lockDir(ctx, b.Dir, progress)
	if err != nil {
		return err
	}
	defer unlock()
	if fresh() { // another process built it meanwhile
		return nil
	}
	goBin, err := findGo()
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "devcluster: building operator %s (%s %s) into %s (first run only, %s on 2 cores)...\n", op.name, op.module, b.Version, b.Dir, op.hint)
	start := time.Now()
	tmp := b.Path() + ".tmp"
	defer os.Remove(tmp)
	env := append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-mod=readonly -buildvcs=false",
		"GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-ldflags", operatorLDFlags, "-o", tmp, op.pkg)
	cmd.Dir, cmd.Env = modDir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("devcluster: building operator %s in %s failed: %w\n%s", op.name, modDir, err, tail(out, 40))
	}
	// The CRDs (and assets) come from the module the binary was built from: its directory in the
	// module cache.
	cmd = exec.CommandContext(ctx, goBin, "list", "-m", "-f", "{{.Dir}}", op.module)
	cmd.Dir, cmd.Env = modDir, env
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("devcluster: locating module %s for its CRDs: %w", op.module, err)
	}
	moduleDir := strings.TrimSpace(string(out))
	if len(op.crdDirs) > 0 {
		if err := copyCRDs(moduleDir, op.crdDirs, b.CRDDir()); err != nil {
			return fmt.Errorf("devcluster: copying the CRDs of %s: %w", op.name, err)
		}
	}
	for _, d := range op.assetDirs {
		if err := copyTree(filepath.Join(moduleDir, d), filepath.Join(b.Dir, filepath.Base(d))); err != nil {
			return fmt.Errorf("devcluster: copying %s of %s: %w", d, op.name, err)
		}
	}
	if err := os.Rename(tmp, b.Path()); err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	if err := os.WriteFile(stampPath, []byte(s+"\n"), 0o644); err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	fmt.Fprintf(progress, "devcluster: built operator %s in %s\n", op.name, time.Since(start).Round(time.Second))
	return nil
}

// copyCRDs replaces dst with the CustomResourceDefinition manifests found in modDir's crdDirs.
func copyCRDs(modDir string, crdDirs []string, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	n := 0
	for _, d := range crdDirs {
		files, err := filepath.Glob(filepath.Join(modDir, d, "*.yaml"))
		if err != nil {
			return err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if !strings.Contains(string(b), "kind: CustomResourceDefinition") {
				continue // e.g. kustomization.yaml
			}
			if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
				return err
			}
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("no CRD in %s under %s", strings.Join(crdDirs, ", "), modDir)
	}
	return nil
}

// operatorNames returns the names of bins, for the state file.
func operatorNames(bins []*OperatorBinaries) []string {
	var names []string
	for _, b := range bins {
		names = append(names, b.Name)
	}
	return names
}
