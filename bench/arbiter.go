package bench

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startArbiter builds cmd/arbiter and runs `arbiter serve` against the cluster and database
// as a process of its own, as it runs in production: in the benchmark's process its scheduler
// shared two Ps and one garbage-collected heap with the load generator and the pod watcher
// that measures it, which kube-scheduler, in its own process, never does. The process is
// stopped when the benchmark ends.
func startArbiter(b *testing.B, dbURL, kubeconfig string) arbiterProcess {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "arbiter")
	build := exec.Command("go", "build", "-o", bin, "github.com/arbiterhq/arbiter/cmd/arbiter")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build arbiter: %v\n%s", err, out)
	}
	logPath := filepath.Join(dir, "arbiter.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"),
		"--database-url", dbURL, "--kubeconfig", kubeconfig, "--scheduler-name", "arbiter", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "ARBITER_ADMIN_PASSWORD=bench-password")
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
	})
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
		_ = cmd.Wait()
		close(exited)
	}()
	var url string
	select {
	case url = <-ready:
	case <-exited:
		b.Fatalf("arbiter serve exited before serving:\n%s", tail(logPath))
	case <-time.After(2 * time.Minute):
		b.Fatalf("arbiter serve not serving after 2 minutes:\n%s", tail(logPath))
	}
	return arbiterProcess{pid: cmd.Process.Pid, url: url}
}

// arbiterProcess is a running `arbiter serve`: its process id and the console's URL.
type arbiterProcess struct {
	pid int
	url string
}

// tail is the end of a log file, for a failure message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
