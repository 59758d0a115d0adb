package benchreport

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
)

// Run is what a reader needs to weigh the figures: the machine, its load, the versions
// measured and how long each step took.
type Run struct {
	Date      time.Time
	CPU       string // the model, from /proc/cpuinfo
	CPUs      int
	MemoryGiB float64
	LoadStart string // /proc/loadavg's 1, 5 and 15 minute averages when the run began
	LoadEnd   string
	Go        string
	// The pins the run built from: hack/k8s, hack/k8s/kwok, hack/operators/kueue.
	Kubernetes, Kwok, Kueue string
	Commit                  string // Arbiter's, with "+ uncommitted changes" when the tree differs
	Steps                   []Step
	Total                   time.Duration // the whole run, 0 when not recorded
}

// Step is one timed step of make bench.
type Step struct {
	Name string
	Took time.Duration
}

// TotalStep is the name under which the steps file records the whole run.
const TotalStep = "total"

// ReadMachine reads the CPU model and count from /proc/cpuinfo's text and the memory from
// /proc/meminfo's.
func ReadMachine(cpuinfo, meminfo io.Reader) (model string, cpus int, memGiB float64, err error) {
	s := bufio.NewScanner(cpuinfo)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		switch strings.TrimSpace(key) {
		case "processor":
			cpus++
		case "model name":
			if ok && model == "" {
				model = strings.TrimSpace(value)
			}
		}
	}
	if err := s.Err(); err != nil {
		return "", 0, 0, fmt.Errorf("reading /proc/cpuinfo: %w", err)
	}
	if cpus == 0 {
		return "", 0, 0, fmt.Errorf("/proc/cpuinfo lists no processor")
	}
	s = bufio.NewScanner(meminfo)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return "", 0, 0, fmt.Errorf("/proc/meminfo's MemTotal %q is not a number of kB", f[1])
			}
			return model, cpus, kb / (1 << 20), nil
		}
	}
	if err := s.Err(); err != nil {
		return "", 0, 0, fmt.Errorf("reading /proc/meminfo: %w", err)
	}
	return "", 0, 0, fmt.Errorf("/proc/meminfo has no MemTotal line in kB")
}

// ReadLoad reads the three load averages of a copy of /proc/loadavg.
func ReadLoad(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the load average: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "", fmt.Errorf("%s does not hold /proc/loadavg's three averages: %q", path, string(b))
	}
	return strings.Join(f[:3], " "), nil
}

// ReadSteps reads the steps file make bench writes: a line per step, its name, a tab and its
// seconds; the line named TotalStep is the whole run.
func ReadSteps(r io.Reader) ([]Step, time.Duration, error) {
	var steps []Step
	var total time.Duration
	s := bufio.NewScanner(r)
	for line := 1; s.Scan(); line++ {
		if strings.TrimSpace(s.Text()) == "" {
			continue
		}
		name, secs, ok := strings.Cut(s.Text(), "\t")
		n, err := strconv.Atoi(strings.TrimSpace(secs))
		if !ok || err != nil || n < 0 || name == "" {
			return nil, 0, fmt.Errorf("line %d of the steps file, %q, is not a step's name, a tab and its whole seconds", line, s.Text())
		}
		if name == TotalStep {
			total = time.Duration(n) * time.Second
			continue
		}
		steps = append(steps, Step{Name: name, Took: time.Duration(n) * time.Second})
	}
	return steps, total, s.Err()
}

// ReadVersions reads the versions the repository at root pins: Kubernetes (hack/k8s), kwok
// (hack/k8s/kwok) and Kueue (hack/operators/kueue).
func ReadVersions(root string) (kubernetes, kwok, kueue string, err error) {
	pins := []struct {
		file, module string
		into         *string
	}{
		{"hack/k8s/go.mod", "k8s.io/kubernetes", &kubernetes},
		{"hack/k8s/kwok/go.mod", "sigs.k8s.io/kwok", &kwok},
		{"hack/operators/kueue/go.mod", "sigs.k8s.io/kueue", &kueue},
	}
	for _, p := range pins {
		path := filepath.Join(root, p.file)
		b, err := os.ReadFile(path)
		if err != nil {
			return "", "", "", fmt.Errorf("reading the pin of %s: %w", p.module, err)
		}
		f, err := modfile.ParseLax(path, b, nil)
		if err != nil {
			return "", "", "", err
		}
		for _, r := range f.Require {
			if r.Mod.Path == p.module {
				*p.into = r.Mod.Version
			}
		}
		if *p.into == "" {
			return "", "", "", fmt.Errorf("%s does not require %s", path, p.module)
		}
	}
	return kubernetes, kwok, kueue, nil
}

// GitCommit is the commit checked out at root, marked when the work tree differs from it.
func GitCommit(ctx context.Context, root string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	head, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "", fmt.Errorf("reading Arbiter's commit with git: %w", err)
	}
	status, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		return "", fmt.Errorf("asking git whether the work tree has changes: %w", err)
	}
	commit := strings.TrimSpace(string(head))
	if len(strings.TrimSpace(string(status))) > 0 {
		commit += " + uncommitted changes"
	}
	return commit, nil
}

// ReadRun gathers the run's description: the machine from /proc, the load and steps make
// bench recorded in dir (loadavg-start, loadavg-end, steps.tsv; a missing one is left out),
// the versions and commit of the repository at root.
func ReadRun(ctx context.Context, dir, root string, date time.Time) (Run, error) {
	run := Run{Date: date, Go: runtime.Version()}
	cpuinfo, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return Run{}, err
	}
	defer cpuinfo.Close()
	meminfo, err := os.Open("/proc/meminfo")
	if err != nil {
		return Run{}, err
	}
	defer meminfo.Close()
	if run.CPU, run.CPUs, run.MemoryGiB, err = ReadMachine(cpuinfo, meminfo); err != nil {
		return Run{}, err
	}
	for _, l := range []struct {
		file string
		into *string
	}{{"loadavg-start", &run.LoadStart}, {"loadavg-end", &run.LoadEnd}} {
		path := filepath.Join(dir, l.file)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if *l.into, err = ReadLoad(path); err != nil {
			return Run{}, err
		}
	}
	if steps, err := os.Open(filepath.Join(dir, "steps.tsv")); err == nil {
		defer steps.Close()
		if run.Steps, run.Total, err = ReadSteps(steps); err != nil {
			return Run{}, fmt.Errorf("%s: %w", steps.Name(), err)
		}
	}
	if run.Kubernetes, run.Kwok, run.Kueue, err = ReadVersions(root); err != nil {
		return Run{}, err
	}
	if run.Commit, err = GitCommit(ctx, root); err != nil {
		return Run{}, err
	}
	return run, nil
}
