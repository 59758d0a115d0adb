package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// The arbiter binary, built once per test binary for tests that need a real process to kill
// or freeze.
var arbiterBin struct {
	once sync.Once
	path string
	err  error
}

func arbiterBinary(t *testing.T) string {
	t.Helper()
	arbiterBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "arbiter-e2e-bin-")
		if err != nil {
			arbiterBin.err = err
			return
		}
		arbiterBin.path = filepath.Join(dir, "arbiter")
		out, err := exec.Command("go", "build", "-o", arbiterBin.path, "github.com/arbiterhq/arbiter/cmd/arbiter").CombinedOutput()
		if err != nil {
			arbiterBin.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if arbiterBin.err != nil {
		t.Fatal(arbiterBin.err)
	}
	return arbiterBin.path
}

// Short lease timings so that failover tests take seconds: lease 4 s, renew deadline 3 s,
// retry 1 s (the defaults are 15/10/2).
const testLease = 4 * time.Second

var leaseFlags = []string{"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s"}

// replica is an `arbiter serve` process.
type replica struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
	exit chan struct{}
}

// startReplica runs `arbiter serve` with leader election as the replica named name, against
// the env's database and cluster, with extra flags.
func (e *env) startReplica(name string, extra ...string) *replica {
	e.t.Helper()
	args := append([]string{"serve", "--addr=127.0.0.1:0", "--data-dir=" + e.t.TempDir(),
		"--database-url=" + e.cfg.DatabaseURL, "--kubeconfig=" + e.cfg.Kubeconfig, "--scheduler-name=" + e.sched,
		"--leader-elect", "--leader-election-identity=" + name, "--log-level=info"}, leaseFlags...)
	args = append(args, extra...)
	cmd := exec.Command(arbiterBinary(e.t), args...)
	cmd.Env = append(os.Environ(), "ARBITER_ADMIN_PASSWORD="+adminPassword)
	r := &replica{name: name, cmd: cmd, exit: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			r.mu.Lock()
			r.log.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
		}
		_ = cmd.Wait()
		close(r.exit)
	}()
	e.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exit:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-r.exit
		}
		e.t.Logf("replica %s log:\n%s", name, r.logText())
	})
	return r
}

func (r *replica) logText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

func (r *replica) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to replica %s: %v", sig, r.name, err)
	}
}

// leaseHolder is who holds this env's Lease, "" if nobody (yet).
func (e *env) leaseHolder() string {
	l, err := e.client.CoordinationV1().Leases("default").Get(e.ctx, "arbiter-"+e.sched, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// scheduledBy lists the namespace's Scheduled events by replica (reportingInstance), and the
// FailedBinding events.
func (e *env) scheduledBy(ns string) (byReplica map[string][]corev1.Event, failed []corev1.Event) {
	e.t.Helper()
	list, err := e.client.CoreV1().Events(ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	byReplica = map[string][]corev1.Event{}
	for _, ev := range list.Items {
		switch ev.Reason {
		case "Scheduled":
			byReplica[ev.ReportingInstance] = append(byReplica[ev.ReportingInstance], ev)
		case "FailedBinding":
			failed = append(failed, ev)
		}
	}
	return byReplica, failed
}

// jobFeed creates a one-pod Job that runs for a few seconds every interval until stopped, and
// returns the names of the Jobs it created.
type jobFeed struct {
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	names map[string]string // name → uid
}

func (e *env) feedJobs(ns string, interval time.Duration) *jobFeed {
	f := &jobFeed{stop: make(chan struct{}), done: make(chan struct{}), names: map[string]string{}}
	go func() {
		defer close(f.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for i := 0; ; i++ {
			name := fmt.Sprintf("feed-%03d", i)
			j := kubeJob(e, name, ns, "3")
			created, err := e.client.BatchV1().Jobs(ns).Create(e.ctx, j, metav1.CreateOptions{})
			if err == nil {
				f.mu.Lock()
				f.names[name] = string(created.UID)
				f.mu.Unlock()
			}
			select {
			case <-f.stop:
				return
			case <-t.C:
			}
		}
	}()
	return f
}

func (f *jobFeed) halt() map[string]string {
	close(f.stop)
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.names
}

// checkBoundOnce waits until every pod of the given Jobs has been bound, then checks that each
// bound pod has exactly one Scheduled event and nothing failed to bind. A leader writes the
// event just after its bind; one that stops in between leaves the event to its successor
// (or to itself, leading again), which writes it from the cluster when its term starts.
func (e *env) checkBoundOnce(ns string, jobs map[string]string) {
	e.t.Helper()
	var pods []corev1.Pod
	e.eventually("every fed Job's pod is bound", 2*time.Minute, func() bool {
		pods = pods[:0]
		for name := range jobs {
			jp := e.jobPods(ns, name)
			if len(jp) == 0 {
				return false
			}
			for _, p := range jp {
				if p.Spec.NodeName == "" {
					return false
				}
			}
			pods = append(pods, jp...)
		}
		return true
	})
	perPod := map[string]int{}
	var failed []corev1.Event
	var lost []string
	defer func() { // also when eventually gives up
		if len(lost) > 0 {
			e.t.Errorf("bound pods without a Scheduled event: %v", lost)
		}
	}()
	e.eventually("every bound pod's Scheduled event is written", 30*time.Second, func() bool {
		var byReplica map[string][]corev1.Event
		byReplica, failed = e.scheduledBy(ns)
		clear(perPod)
		for _, evs := range byReplica {
			for _, ev := range evs {
				perPod[ev.InvolvedObject.Name]++
			}
		}
		lost = lost[:0]
		for _, p := range pods {
			if perPod[p.Name] == 0 {
				lost = append(lost, p.Name)
			}
		}
		return len(lost) == 0
	})
	for _, p := range pods {
		if n := perPod[p.Name]; n > 1 {
			e.t.Errorf("pod %s has %d Scheduled events, want exactly 1", p.Name, n)
		}
	}
	for _, ev := range failed {
		e.t.Errorf("bind failed: %s %s (by %s)", ev.InvolvedObject.Name, ev.Message, ev.ReportingInstance)
	}
}

// checkRecords checks that every fed Job has its workload record, whether it still runs or
// finished before a new leader took over.
func (e *env) checkRecords(jobs map[string]string) {
	e.t.Helper()
	missing := func() []string {
		var names []string
		for name, uid := range jobs {
			if _, err := e.store.WorkloadRecord(e.ctx, uid); err != nil {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		return names
	}
	var lost []string
	defer func() { // also when eventually gives up
		if len(lost) > 0 {
			e.t.Errorf("Jobs without a workload record: %v", lost)
		}
	}()
	e.eventually("every fed Job has its workload record", 30*time.Second, func() bool {
		lost = missing()
		return len(lost) == 0
	})
}

func hasLine(log, s string) bool { return strings.Contains(log, s) }

// kubeJob is a one-pod, one-GPU Job of the env's scheduler that runs for runSeconds.
func kubeJob(e *env, name, ns, runSeconds string) *batchv1.Job {
	return objects.Job(name, ns).Pods(1).GPUs(1).CPU("1").SchedulerName(e.sched).
		PodAnnotation(devcluster.AnnotationRunSeconds, runSeconds).Obj()
}
