// Processes of a development cluster: starting, reusing and stopping them, and the state file
// that says what runs in a directory.

package devcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// state is <dir>/state.json: what is running in a directory.
type state struct {
	Version       string   `json:"version"`
	BinDir        string   `json:"binDir"`
	EtcdPort      int      `json:"etcdPort"`
	EtcdPeerPort  int      `json:"etcdPeerPort"`
	APIServerPort int      `json:"apiServerPort"`
	KubeScheduler bool     `json:"kubeScheduler"`
	Operators     []string `json:"operators,omitempty"`
	// OperatorPorts are the ports each operator was given.
	OperatorPorts []operatorPorts `json:"operatorPorts,omitempty"`
	Detached      bool            `json:"detached"`
	OwnerPID      int             `json:"ownerPID"`
	StartedAt     time.Time       `json:"startedAt"`
	Processes     []procRef       `json:"processes"`
}

type operatorPorts struct {
	Name    string `json:"name"`
	Health  int    `json:"health"`
	Webhook int    `json:"webhook"`
}

type procRef struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	Exe  string `json:"exe"`
}

type proc struct {
	procRef
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	log  string
}

// controlPlaneGOGC is the garbage collector's target for etcd, kube-apiserver,
// kube-controller-manager and kwok. On two cores filling 500 nodes with 4,000 pods, the API
// server spent about 13 % of its CPU collecting garbage at Go's default of 100, and the control
// plane shares those cores with the scheduler. At 400 each process collects a quarter as often,
// for a heap of up to five times its live data, which a development machine has room for: in
// `make bench` the API server peaks at 3.6-4.1 GB resident (1.6 GB at 100), etcd at 0.8 GB.
// kube-scheduler keeps Go's default, as it ships: it is the baseline Arbiter is measured
// against. A GOGC in the environment applies to all instead.
const controlPlaneGOGC = "400"

// run starts one component of the control plane (see spawn) with its garbage collector's target.
func (c *Cluster) run(bins *Binaries, name string, args ...string) error {
	var env []string
	if name != KubeScheduler && os.Getenv("GOGC") == "" {
		env = append(env, "GOGC="+controlPlaneGOGC)
	}
	return c.spawn(name, bins.Path(name), env, args...)
}

// spawn starts executable exe as component name, with env added to this process's environment,
// its output in <dir>/logs/<name>.log, in its own process group, and records it in state.json.
func (c *Cluster) spawn(name, exe string, env []string, args ...string) error {
	logPath := filepath.Join(c.dir, "logs", name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(exe, args...)
	cmd.Dir = c.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// kwok reads ~/.kwok/kwok.yaml if it exists; keep it to the stages given here.
	cmd.Env = append(append(os.Environ(), "HOME="+c.dir), env...)
	if c.spawner == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	if c.spawner != nil {
		err = c.spawner.do(cmd.Start)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return fmt.Errorf("devcluster: starting %s: %w", name, err)
	}
	p := &proc{procRef: procRef{Name: name, PID: cmd.Process.Pid, Exe: exe}, cmd: cmd, done: make(chan struct{}), log: logPath}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.st.Processes = append(c.st.Processes, p.procRef)
	c.mu.Unlock()
	if err := writeState(c.dir, c.st); err != nil {
		return err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
		c.mu.Lock()
		stopping := c.stopping
		c.mu.Unlock()
		if !stopping {
			err := fmt.Errorf("devcluster: %s exited (%v); last lines of %s:\n%s", name, p.err, logPath, logTail(logPath, 30))
			select {
			case c.failed <- err:
			default:
			}
		}
	}()
	return nil
}

// reuse returns the directory's running cluster if every recorded process is alive, the API
// server is ready with this token, and the components match opts.
func reuse(ctx context.Context, dir string, st *state, bins *Binaries, opts Options, token string) *Cluster {
	if st.BinDir != bins.Dir || st.Version != bins.Version || st.KubeScheduler != opts.KubeScheduler || len(st.Processes) == 0 ||
		!slices.Equal(st.Operators, opts.Operators) {
		return nil
	}
	for _, p := range st.Processes {
		if !alive(p) {
			return nil
		}
	}
	c := &Cluster{dir: dir, kubeconfig: filepath.Join(dir, "kubeconfig"), st: st, failed: make(chan error, 1)}
	if err := c.writeConfig(token); err != nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.waitReadyz(cctx); err != nil {
		return nil
	}
	return c
}

// StopDir stops the cluster recorded in dir (as "arbiter devcluster down" does), whichever
// process started it, and waits until its processes are gone. It stops only processes whose
// PID and executable match the record. A directory with no running cluster is not an error.
func StopDir(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	st, err := readState(dir)
	if err != nil {
		return err
	}
	if st == nil {
		return nil
	}
	return stopState(dir, st, 10*time.Second)
}

func stopState(dir string, st *state, grace time.Duration) error {
	var errs []error
	for i := len(st.Processes) - 1; i >= 0; i-- {
		p := st.Processes[i]
		if !alive(p) {
			continue
		}
		if err := terminate(p.PID, grace, nil); err != nil {
			errs = append(errs, fmt.Errorf("%s (pid %d): %w", p.Name, p.PID, err))
		}
	}
	if len(errs) == 0 {
		os.Remove(filepath.Join(dir, "state.json"))
	}
	return errors.Join(errs...)
}

// terminate sends SIGTERM to the process group of pid, then SIGKILL after grace, and waits
// until the process is gone (done, if given, closes when its parent has reaped it).
func terminate(pid int, grace time.Duration, done <-chan struct{}) error {
	gone := func() bool {
		if done != nil {
			select {
			case <-done:
				return true
			default:
				return false
			}
		}
		return !pidAlive(pid)
	}
	if gone() {
		return nil
	}
	syscall.Kill(-pid, syscall.SIGTERM)
	syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for !gone() {
		if time.Now().After(deadline) {
			syscall.Kill(-pid, syscall.SIGKILL)
			syscall.Kill(pid, syscall.SIGKILL)
			deadline = time.Now().Add(10 * time.Second)
			for !gone() {
				if time.Now().After(deadline) {
					return errors.New("still running after SIGKILL")
				}
				time.Sleep(20 * time.Millisecond)
			}
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// alive reports whether p's PID is a live process running p's executable (not a recycled PID).
func alive(p procRef) bool {
	if !pidAlive(p.PID) {
		return false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.PID))
	if err != nil {
		return false
	}
	exe = strings.TrimSuffix(exe, " (deleted)")
	return exe == p.Exe
}

// pidAlive reports whether pid exists and is not a zombie.
func pidAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

func readState(dir string) (*state, error) {
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("devcluster: %w", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("devcluster: %s/state.json: %w", dir, err)
	}
	return &st, nil
}

func writeState(dir string, st *state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, "state.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	return nil
}

func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	const max = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		f.Seek(fi.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return tail(b, n)
}

// spawner starts processes from one OS thread that stays alive while they run: Pdeathsig fires
// when the thread that started a child exits, not the process, and Go may end threads.
type spawner struct {
	reqs chan func()
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan func())}
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for f := range s.reqs {
			f()
		}
	}()
	return s
}

func (s *spawner) do(f func() error) error {
	res := make(chan error, 1)
	s.reqs <- func() { res <- f() }
	return <-res
}

func (s *spawner) close() { close(s.reqs) }
