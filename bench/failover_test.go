package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// The failover benchmark: two Arbiter replicas with leader election on one database and
// cluster, the client-go default lease (15 s, renewed every 2 s), pods waiting when the
// leader stops; the figure is the time from the stop to the standby's first bind.
const (
	failoverNodes = 100 // × benchGPUs
	failoverPods  = 300 // one GPU each: all fit, so the first bind waits only for the failover
	// leaseNamespace and leaseName are where `arbiter serve --leader-elect` keeps its Lease
	// by default outside a cluster (server/leader.go) for the scheduler name "arbiter".
	leaseNamespace = "default"
	leaseName      = "arbiter-arbiter"
)

// BenchmarkFailover: the leader is stopped (a) gracefully (SIGTERM: it releases the lease as it
// exits, and the standby takes it at its next attempt, every 2 s) and (b) killed (SIGKILL: the
// standby waits for the lease to expire, 15 s after the leader's last renewal), each time
// with 300 one-GPU pods waiting; the round lasts until the standby has bound them all. The
// standby runs its informers while it waits (warm): the benchmark checks it has the cluster
// before the leader stops, so the figure does not include the first lists. About a minute,
// cluster start included. Run with -benchtime=1x.
func BenchmarkFailover(b *testing.B) {
	cb := startCluster(b, failoverNodes, false)
	bin := buildArbiter(b)
	ns := cb.project("failover", failoverNodes*benchGPUs)
	for b.Loop() {
		first := cb.startReplica(bin, "replica-1")
		cb.waitLeader(first)
		second := cb.startReplica(bin, "replica-2")
		cb.waitWarm(second)
		graceful, summary := cb.failover(ns, "graceful", first, second, func(p *schedulerProcess) time.Time {
			stopped := time.Now()
			_ = syscall.Kill(p.pid, syscall.SIGTERM) // taken when it wakes
			_ = syscall.Kill(p.pid, syscall.SIGCONT)
			return stopped
		})
		b.Logf("graceful (SIGTERM): %s", summary)

		third := cb.startReplica(bin, "replica-3")
		cb.waitWarm(third)
		killed, summary := cb.failover(ns, "killed", second, third, func(p *schedulerProcess) time.Time {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
			// It stopped working when it was frozen, before the pods were made: its last
			// renewal, from which the lease runs, was then at the latest.
			return p.frozen
		})
		b.Logf("killed (SIGKILL): %s", summary)
		b.ReportMetric(graceful.Seconds(), "arbiter-failover-graceful-first-bind-s")
		b.ReportMetric(killed.Seconds(), "arbiter-failover-killed-first-bind-s")
	}
}

// replica is an Arbiter replica of the failover benchmark.
type replica struct {
	*schedulerProcess
	identity string
	log      string // its log file
	started  time.Time
}

// startReplica runs `arbiter serve --leader-elect` as identity, logging at info (the
// benchmark reads when it synced and when it led).
func (cb *clusterBench) startReplica(bin, identity string) *replica {
	cb.b.Helper()
	dir := cb.b.TempDir()
	started := time.Now()
	p := runArbiter(cb.b, bin, dir, cb.dbURL, cb.cluster.Kubeconfig(),
		"--leader-elect", "--leader-election-identity", identity, "--log-level", "info")
	return &replica{schedulerProcess: p, identity: identity, log: filepath.Join(dir, "arbiter.log"), started: started}
}

// waitLeader waits until r holds the lease.
func (cb *clusterBench) waitLeader(r *replica) {
	cb.b.Helper()
	poll.UntilNil(cb.b, r.identity+" holds the lease", time.Minute, func() error {
		l, err := cb.client.CoordinationV1().Leases(leaseNamespace).Get(cb.ctx, leaseName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if h := l.Spec.HolderIdentity; h == nil || *h != r.identity {
			return fmt.Errorf("the lease is held by %v", l.Spec.HolderIdentity)
		}
		return nil
	})
	if _, ok := logTime(r.log, "took over from the cluster"); !ok {
		poll.Until(cb.b, r.identity+" has taken over", time.Minute, func() bool {
			_, ok := logTime(r.log, "took over from the cluster")
			return ok
		})
	}
}

// waitWarm waits until the standby r has the cluster in its cache (its informers' first
// lists), which it does while another replica leads.
func (cb *clusterBench) waitWarm(r *replica) {
	cb.b.Helper()
	poll.Until(cb.b, r.identity+" has synced its informers", 2*time.Minute, func() bool {
		_, ok := logTime(r.log, "scheduler informers synced")
		return ok
	})
	synced, _ := logTime(r.log, "scheduler informers synced")
	cb.b.Logf("standby %s: started → informers synced %s (before it leads)", r.identity, synced.Sub(r.started).Round(time.Millisecond))
}

// failover freezes the leader (SIGSTOP), creates the pods, stops it (stop: returns the moment
// the leader stopped working), and returns the time from then to the standby's first bind,
// with a summary; then it deletes the pods.
func (cb *clusterBench) failover(ns, prefix string, leader, standby *replica, stop func(*schedulerProcess) time.Time) (time.Duration, string) {
	b := cb.b
	b.Helper()
	cb.podsMu.Lock()
	cb.seenIn[ns], cb.boundIn[ns] = 0, 0
	cb.podsMu.Unlock()
	// Frozen, the leader binds none of the pods made now and renews nothing.
	if err := syscall.Kill(leader.pid, syscall.SIGSTOP); err != nil {
		b.Fatal(err)
	}
	leader.frozen = time.Now()
	pod := oneGPUJob("", ns, "arbiter", nil).Spec.Template
	failed := concurrently(failoverPods, func(i int) error {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), Namespace: ns}, Spec: *pod.Spec.DeepCopy()}
		_, err := cb.client.CoreV1().Pods(ns).Create(cb.ctx, p, metav1.CreateOptions{})
		return err
	})
	if failed > 0 {
		b.Fatalf("%d pod creations failed", failed)
	}
	if !cb.waitCount(cb.seenIn, ns, failoverPods, time.Minute) {
		b.Fatalf("only %d of %d pods exist", cb.count(cb.seenIn, ns), failoverPods)
	}
	made := time.Since(leader.frozen)
	stopped := stop(leader.schedulerProcess)
	// Checked every 10 ms, not at poll's interval: the interval is this figure's resolution.
	for cb.count(cb.boundIn, ns) == 0 && time.Since(stopped) < 2*time.Minute {
		time.Sleep(10 * time.Millisecond)
	}
	firstBind := time.Now()
	if !cb.waitCount(cb.boundIn, ns, failoverPods, 2*time.Minute) {
		b.Fatalf("%s: only %d of %d pods bound after %s", prefix, cb.count(cb.boundIn, ns), failoverPods, time.Since(stopped))
	}
	all := time.Since(stopped)
	select {
	case <-leader.exited:
	case <-time.After(time.Minute):
		b.Fatalf("the stopped leader %s has not exited", leader.identity)
	}
	leading, ok := logTime(standby.log, "leading: this replica schedules now")
	if !ok {
		b.Fatalf("%s bound pods but never logged that it leads:\n%s", standby.identity, tail(standby.log))
	}
	if firstBind.Before(leading) {
		b.Fatalf("a pod was bound %s before %s led: the stopped leader bound it, so the figure is not a failover's", leading.Sub(firstBind), standby.identity)
	}
	tookOver, _ := logTime(standby.log, "took over from the cluster")
	summary := fmt.Sprintf("%d pods made in %s while the leader was frozen; leader stopped → standby leads %s → took over %s → first bind %s; all bound after %s",
		failoverPods, made.Round(time.Millisecond), leading.Sub(stopped).Round(time.Millisecond), tookOver.Sub(stopped).Round(time.Millisecond),
		firstBind.Sub(stopped).Round(time.Millisecond), all.Round(time.Millisecond))

	concurrently(failoverPods, func(i int) error {
		return cb.client.CoreV1().Pods(ns).Delete(cb.ctx, fmt.Sprintf("%s-%d", prefix, i), metav1.DeleteOptions{})
	})
	waitNoPods(b, cb, ns)
	return firstBind.Sub(stopped), summary
}

// logTime is the time of the first line of an Arbiter log (slog's text format) whose message
// is msg.
func logTime(path, msg string) (time.Time, bool) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 64*1024), 1024*1024)
	for lines.Scan() {
		line := lines.Text()
		if !strings.Contains(line, `msg="`+msg+`"`) {
			continue
		}
		stamp, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		if at, err := time.Parse(time.RFC3339Nano, stamp); err == nil {
			return at, true
		}
	}
	return time.Time{}, false
}
