package e2e

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/store"
)

// ownCluster starts a local control plane for this test alone, with the operators named,
// stopped when it ends: a test that freezes kube-apiserver must not freeze the cluster the
// other tests share, and one that needs other operators than the shared cluster's has its own.
func ownCluster(t *testing.T, operators ...string) *devcluster.Cluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "arbiter-e2e-own-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	c, err := devcluster.Start(ctx, devcluster.Options{Dir: dir, Operators: operators, Progress: testWriter{t}})
	if err != nil {
		os.RemoveAll(dir)
		t.Fatalf("local control plane with %v: %v", operators, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Logf("stopping the control plane: %v", err)
		}
		os.RemoveAll(dir)
	})
	return c
}

// outage is how long the test freezes kube-apiserver. The issue asks about 30 s; 20 s
// behaves the same, as it outlasts every timing involved: the reachability probe (every 2 s,
// 3 s timeout), the test's lease (4 s) and the deadline of each API call (15 s).
const outage = 20 * time.Second

// TestOutage_APIServerFrozen: kube-apiserver is frozen (SIGSTOP) while Jobs keep arriving.
// Arbiter says once that the API server is unreachable, shows the console banner, neither
// spins (little CPU) nor logs a line per attempt; once the API server is back it binds
// everything exactly once and loses no workload record.
func TestOutage_APIServerFrozen(t *testing.T) {
	t.Parallel()
	c := ownCluster(t)
	e := newEnvOn(t, c, 2, 8)
	e.a.stop() // the replica below, a process of its own, replaces the in-process Arbiter
	ns := e.project("outage", 16, store.PolicyUpdate{})
	r := e.startReplica("solo")
	e.eventually("the replica leads", time.Minute, func() bool { return e.leaseHolder() == "solo" })
	e.eventually("the replica serves", time.Minute, func() bool { return hasLine(r.logText(), "Arbiter is serving") })
	console := (&arbiter{URL: r.url(t)}).signIn(t, "admin", adminPassword)
	feed := e.feedJobs(ns, 300*time.Millisecond)
	e.eventually("the replica binds the arriving Jobs", time.Minute, func() bool {
		by, _ := e.scheduledBy(ns)
		return len(by["solo"]) >= 3
	})

	apiserver := c.PIDs()[devcluster.KubeAPIServer]
	if err := syscall.Kill(apiserver, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(apiserver, syscall.SIGCONT) })
	frozenAt := time.Now()
	logBefore := len(r.logText())
	cpuBefore := processCPU(t, r.cmd.Process.Pid)
	e.eventually("the console shows the banner", outage, func() bool {
		return strings.Contains(get(t, console, r.url(t)+"/"), "The cluster is unreachable since")
	})
	time.Sleep(time.Until(frozenAt.Add(outage))) // the outage itself, not a wait for a condition
	cpu := processCPU(t, r.cmd.Process.Pid) - cpuBefore
	during := r.logText()[logBefore:]
	if err := syscall.Kill(apiserver, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	t.Logf("during the %s outage the replica used %s of CPU and logged:\n%s", outage, cpu, during)

	if n := strings.Count(during, "the Kubernetes API server is unreachable"); n != 1 {
		t.Errorf("the replica said %d times that the API server is unreachable, want once", n)
	}
	// No line per attempt (client-go's retries log at debug level only): no line says the
	// same thing twice. (A bind in flight when the API server froze may fail once, for its pod.)
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(during), "\n") {
		if strings.TrimSpace(line) != "" {
			seen[logTime.ReplaceAllString(line, "")]++
		}
	}
	for line, n := range seen {
		if n > 1 {
			t.Errorf("the replica logged %d times during the outage: %s", n, line)
		}
	}
	// A hot loop would burn a core for the whole outage; waiting costs next to nothing.
	if cpu > outage/4 {
		t.Errorf("the replica used %s of CPU during a %s outage: a busy loop?", cpu, outage)
	}

	e.eventually("the replica says the API server answers again", time.Minute, func() bool {
		return strings.Contains(r.logText(), "the Kubernetes API server answers again")
	})
	e.eventually("the banner is gone", time.Minute, func() bool {
		return !strings.Contains(get(t, console, r.url(t)+"/"), "The cluster is unreachable since")
	})
	feed.mu.Lock()
	after := len(feed.names)
	feed.mu.Unlock()
	e.eventually("more Jobs arrive after the outage", time.Minute, func() bool {
		feed.mu.Lock()
		defer feed.mu.Unlock()
		return len(feed.names) >= after+5
	})
	jobs := feed.halt()
	// A bind in flight when the API server froze fails after its call deadline ("bind failed",
	// once), yet the API server may carry it out when it wakes: that pod is bound without the
	// Scheduled event its bind would have written; the replica, leading again after the
	// outage, writes it from the cluster as its new term starts.
	e.checkBoundOnce(ns, jobs)
	e.checkRecords(jobs)
}

// logTime is the time of a log line of the text handler.
var logTime = regexp.MustCompile(`^time=\S+ `)

// url is where the replica serves, from its log.
func (r *replica) url(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`msg="Arbiter is serving" url=(\S+)`).FindStringSubmatch(r.logText())
	if m == nil {
		t.Fatalf("replica %s has not said where it serves", r.name)
	}
	return m[1]
}

// processCPU is the CPU time (user and system) a process has used so far.
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command (which may hold spaces) in parentheses; utime and stime are
	// the 14th and 15th fields, in clock ticks of 1/100 s on Linux.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
