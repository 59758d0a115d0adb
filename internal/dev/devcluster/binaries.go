package devcluster

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
)

// The binaries of a development cluster. Their versions are pinned by the go.mod files under
// hack/k8s (kubernetes and its staging modules in hack/k8s/go.mod, etcd in hack/k8s/etcd/go.mod,
// kwok in hack/k8s/kwok/go.mod); nothing else in the repository names a version.
const (
	Etcd                  = "etcd"
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	Kwok                  = "kwok"
)

// Binaries locates the built components of a development cluster.
type Binaries struct {
	// Dir holds one executable per component, named after it.
	Dir string
	// Version is the k8s.io/kubernetes version they were built from, e.g. "v1.34.4".
	Version string
}

// Path returns the path of the executable of component name (e.g. KubeAPIServer).
func (b *Binaries) Path(name string) string { return filepath.Join(b.Dir, name) }

// component says how one binary is built: "go build" in module dir (relative to hack/k8s) of
// package pkg. Components of the same module are built by one go command.
type component struct {
	name   string
	module string
	pkg    string
	hint   string
}

var components = []component{
	{Etcd, "etcd", ".", "~1.5 min"},
	{KubeAPIServer, ".", "./kube-apiserver", "together ~8-14 min"},
	{KubeControllerManager, ".", "./kube-controller-manager", ""},
	{KubeScheduler, ".", "./kube-scheduler", ""},
	{Kwok, "kwok", "sigs.k8s.io/kwok/cmd/kwok", "~2 min"},
}

// EnvSource names the directory of the hack/k8s module when it cannot be found by walking up
// from the working directory or the executable.
const EnvSource = "ARBITER_K8S_SRC"

// EnvBinDir names a directory of prebuilt binaries to use as they are, without building or
// checking versions.
const EnvBinDir = "ARBITER_K8S_BIN"

// FindSource returns the directory of the hack/k8s module: $ARBITER_K8S_SRC, else the first
// hack/k8s/go.mod found walking up from the working directory, else from the executable's
// directory.
func FindSource() (string, error) {
	if dir := os.Getenv(EnvSource); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
			return "", fmt.Errorf("%s=%s: no go.mod there: %w", EnvSource, dir, err)
		}
		return filepath.Abs(dir)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err := filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	for _, dir := range starts {
		for {
			cand := filepath.Join(dir, "hack", "k8s")
			if _, err := os.Stat(filepath.Join(cand, "go.mod")); err == nil {
				return cand, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("devcluster: cannot find hack/k8s/go.mod (the module that builds the local Kubernetes "+
		"control plane) above %s; run from the Arbiter repository or set %s to its hack/k8s directory",
		strings.Join(starts, " or "), EnvSource)
}

// CacheRoot returns $XDG_CACHE_HOME/arbiter/k8s, or ~/.cache/arbiter/k8s.
func CacheRoot() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("devcluster: no XDG_CACHE_HOME and no home directory: %w", err)
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "arbiter", "k8s"), nil
}

// kubernetesVersion reads the version of k8s.io/kubernetes required by hack/k8s/go.mod.
func kubernetesVersion(src string) (string, error) {
	f, err := os.Open(filepath.Join(src, "go.mod"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 && fields[0] == "k8s.io/kubernetes" {
			return fields[1], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("devcluster: %s/go.mod does not require k8s.io/kubernetes", src)
}

// stamp is a hash of everything a component's binary is built from: its module's go.mod and
// go.sum, the Go sources of its module directory, the Go version, and the build flags.
func stamp(src string, c component, ldflags string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n", c.name, c.pkg, runtime.Version(), ldflags)
	dir := filepath.Join(src, c.module)
	var files []string
	for _, pat := range []string{"go.mod", "go.sum", "*.go", "*/*.go"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return "", err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		// Only this component's main (or none for kwok) and shared files affect it; nested
		// modules (etcd, kwok) are hashed on their own.
		if strings.Contains(rel, string(filepath.Separator)) {
			top := strings.SplitN(rel, string(filepath.Separator), 2)[0]
			if "./"+top != c.pkg {
				continue
			}
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// EnsureBinaries builds the components of a development cluster into the cache
// ($XDG_CACHE_HOME/arbiter/k8s/<kubernetes version>/, or ~/.cache/...) when they are missing or
// were built from other versions, printing progress to progress (may be nil), and returns where
// they are. names selects components (Etcd, KubeAPIServer, ...); none means all but
// kube-scheduler, which only benchmarks use. With ARBITER_K8S_BIN set it returns that directory
// unchecked. Concurrent callers (e.g. two test binaries) serialise on a lock file in the cache
// directory; the second finds the binaries built. A first build takes 10-20 minutes on 2 cores
// (about 19 CPU-minutes); a cached run takes a few milliseconds.
func EnsureBinaries(ctx context.Context, progress io.Writer, names ...string) (*Binaries, error) {
	if progress == nil {
		progress = io.Discard
	}
	for _, n := range names {
		if !slices.Contains(AllComponents, n) {
			return nil, fmt.Errorf("devcluster: no component %q", n)
		}
	}
	if dir := os.Getenv(EnvBinDir); dir != "" {
		return &Binaries{Dir: dir, Version: "prebuilt"}, nil
	}
	src, err := FindSource()
	if err != nil {
		return nil, err
	}
	version, err := kubernetesVersion(src)
	if err != nil {
		return nil, err
	}
	root, err := CacheRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("devcluster: %w", err)
	}
	bins := &Binaries{Dir: dir, Version: version}

	ldflags := versionLDFlags(version)
	stale := map[string][]component{} // module -> components to build
	stamps := map[string]string{}
	check := func() error {
		clear(stale)
		for _, c := range components {
			if !wanted(c.name, names) {
				continue
			}
			s, err := stamp(src, c, ldflags)
			if err != nil {
				return fmt.Errorf("devcluster: hashing %s sources: %w", c.name, err)
			}
			stamps[c.name] = s
			old, _ := os.ReadFile(bins.Path(c.name) + ".stamp")
			if _, err := os.Stat(bins.Path(c.name)); err == nil && strings.TrimSpace(string(old)) == s {
				continue
			}
			stale[c.module] = append(stale[c.module], c)
		}
		return nil
	}
	if err := check(); err != nil {
		return nil, err
	}
	if len(stale) == 0 {
		return bins, nil
	}

	unlock, err := lockDir(ctx, dir, progress)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := check(); err != nil { // another process may have built them meanwhile
		return nil, err
	}
	if len(stale) == 0 {
		return bins, nil
	}
	goBin, err := findGo()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	fmt.Fprintf(progress, "devcluster: building the local Kubernetes control plane %s into %s (first run only: about 10-20 minutes on 2 cores, then cached)\n", version, dir)
	for _, module := range []string{"etcd", ".", "kwok"} {
		cs := stale[module]
		if len(cs) == 0 {
			continue
		}
		if err := buildModule(ctx, goBin, src, module, cs, dir, ldflags, stamps, progress); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(progress, "devcluster: built in %s\n", time.Since(start).Round(time.Second))
	return bins, nil
}

func wanted(name string, names []string) bool {
	if len(names) == 0 {
		return name != KubeScheduler
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// AllComponents names every component, for EnsureBinaries.
var AllComponents = []string{Etcd, KubeAPIServer, KubeControllerManager, KubeScheduler, Kwok}

// versionLDFlags stamps the Kubernetes binaries with their version, as the upstream build does,
// so that kubectl version and the API's /version report it.
func versionLDFlags(version string) string {
	v := strings.TrimPrefix(version, "v")
	parts := strings.SplitN(v, ".", 3)
	major, minor := "", ""
	if len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}
	const p = "k8s.io/component-base/version"
	return fmt.Sprintf("-s -w -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean",
		p, version, p, major, p, minor, p)
}

func buildModule(ctx context.Context, goBin, src, module string, cs []component, dir, ldflags string, stamps map[string]string, progress io.Writer) error {
	names := make([]string, len(cs))
	var hints []string
	pkgs := make([]string, len(cs))
	for i, c := range cs {
		names[i], pkgs[i] = c.name, c.pkg
		if c.hint != "" {
			hints = append(hints, c.hint)
		}
	}
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(progress, "devcluster: building %s (first run only, %s on 2 cores)...\n", strings.Join(names, ", "), strings.Join(hints, ", "))
	start := time.Now()
	args := []string{"build", "-trimpath", "-o", tmp + string(filepath.Separator)}
	if module != "kwok" {
		args = append(args, "-ldflags", ldflags)
	} else {
		args = append(args, "-ldflags", "-s -w")
	}
	args = append(args, pkgs...)
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = filepath.Join(src, module)
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-mod=readonly -buildvcs=false",
		"GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("devcluster: building %s in %s failed: %w\n%s", strings.Join(names, ", "), cmd.Dir, err, tail(out, 40))
	}
	for _, c := range cs {
		built := filepath.Join(tmp, filepath.Base(c.pkg))
		if filepath.Base(c.pkg) == "." {
			built = filepath.Join(tmp, c.name)
		}
		if _, err := os.Stat(built); err != nil {
			// go build names the binary after the module path's last element for ".".
			m, _ := filepath.Glob(filepath.Join(tmp, "*"))
			if len(m) != 1 {
				return fmt.Errorf("devcluster: building %s: no binary in %s", c.name, tmp)
			}
			built = m[0]
		}
		if err := os.Rename(built, filepath.Join(dir, c.name)); err != nil {
			return fmt.Errorf("devcluster: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.name+".stamp"), []byte(stamps[c.name]+"\n"), 0o644); err != nil {
			return fmt.Errorf("devcluster: %w", err)
		}
	}
	fmt.Fprintf(progress, "devcluster: built %s in %s\n", strings.Join(names, ", "), time.Since(start).Round(time.Second))
	return nil
}

func findGo() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", errors.New("devcluster: the go command is needed to build the local control plane and is not on PATH")
}

// lockDir takes an exclusive flock on dir/.lock, waiting (and saying so) while another process
// holds it.
func lockDir(ctx context.Context, dir string, progress io.Writer) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("devcluster: %w", err)
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("devcluster: locking %s: %w", dir, err)
		}
		if !said {
			fmt.Fprintf(progress, "devcluster: waiting for another process building into %s...\n", dir)
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
