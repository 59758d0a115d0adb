package bench

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// schedulerProcess is a scheduler the benchmark runs as a process of its own: Arbiter
// (`arbiter serve`) or kube-scheduler. Stop ends it (SIGTERM, then SIGKILL after 30 s) and
// waits until it is gone; the benchmark's cleanup stops it if nothing did before.
type schedulerProcess struct {
	pid    int
	url    string // Arbiter's console; "" for kube-scheduler
	cmd    *exec.Cmd
	exited chan struct{}
	once   sync.Once
	// frozen is when the benchmark stopped the process with SIGSTOP (failover_test.go)
	frozen time.Time
}

func (p *schedulerProcess) Stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

// buildArbiter builds cmd/arbiter from this tree into a temporary directory.
func buildArbiter(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "arbiter")
	build := exec.Command("go", "build", "-o", bin, "github.com/arbiterhq/arbiter/cmd/arbiter")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build arbiter: %v\n%s", err, out)
	}
	return bin
}

// startArbiter builds cmd/arbiter and runs `arbiter serve` against the cluster and database
// as a process of its own, as it runs in production: in the benchmark's process its scheduler
// shared two Ps and one garbage-collected heap with the load generator and the pod watcher
// that measures it, which kube-scheduler, in its own process, never does. It returns the
// process; it is stopped when the benchmark ends.
func startArbiter(b *testing.B, dbURL, kubeconfig string) *schedulerProcess {
	b.Helper()
	return runArbiter(b, buildArbiter(b), b.TempDir(), dbURL, kubeconfig)
}

// runArbiter starts a built Arbiter with its data in dataDir and returns once it serves;
// flags, if any, come after the benchmark's own and override them.
func runArbiter(b *testing.B, bin, dataDir, dbURL, kubeconfig string, flags ...string) *schedulerProcess {
	b.Helper()
	logPath := filepath.Join(dataDir, "arbiter.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dataDir, "data"),
		"--database-url", dbURL, "--kubeconfig", kubeconfig, "--scheduler-name", "arbiter", "--log-level", "warn"}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ARBITER_ADMIN_PASSWORD=bench-password")
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	p := start(b, cmd, logFile)
	ready := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if _, url, ok := strings.Cut(lines.Text(), "Arbiter is running at "); ok {
				ready <- strings.TrimSpace(url)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case p.url = <-ready:
	case <-p.exited:
		b.Fatalf("arbiter serve exited before serving:\n%s", tail(logPath))
	case <-time.After(2 * time.Minute):
		b.Fatalf("arbiter serve not serving after 2 minutes:\n%s", tail(logPath))
	}
	return p
}

// start starts cmd, closing logFile once it has exited, and stops it at the benchmark's end.
func start(b *testing.B, cmd *exec.Cmd, logFile *os.File) *schedulerProcess {
	b.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &schedulerProcess{pid: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	b.Cleanup(p.Stop)
	return p
}

// runKubeScheduler starts kube-scheduler, built by devcluster from the same Kubernetes
// source as the control plane, with the configuration devcluster writes into the cluster's
// directory (its own Go defaults, as it ships).
func runKubeScheduler(b *testing.B, bin, clusterDir string) *schedulerProcess {
	b.Helper()
	logFile, err := os.OpenFile(filepath.Join(clusterDir, "logs", "kube-scheduler.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "--config="+filepath.Join(clusterDir, "kube-scheduler.yaml"), "--secure-port=0", "--profiling=false")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	return start(b, cmd, logFile)
}

// tail is the end of a log file, for a failure message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
