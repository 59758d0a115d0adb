package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// One local control plane serves every scheduling test of this binary. Tests isolate
// themselves: each has its own database, its own Arbiter with its own scheduler name, its own
// node pool of fake nodes and its own namespaces.
var shared struct {
	once    sync.Once
	cluster *devcluster.Cluster
	dir     string
	err     error
}

func sharedCluster(t *testing.T) *devcluster.Cluster {
	t.Helper()
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "arbiter-e2e-cluster-")
		if shared.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		shared.cluster, shared.err = devcluster.Start(ctx, devcluster.Options{
			Dir: shared.dir, Progress: os.Stderr,
			// The kinds' tests run each kind with its real controller.
			Operators: devcluster.AllOperators,
		})
	})
	if shared.err != nil {
		t.Fatalf("local control plane: %v", shared.err)
	}
	return shared.cluster
}

func stopSharedCluster() {
	if shared.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = shared.cluster.Stop(ctx)
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// env is one scheduling test's world.
type env struct {
	t      *testing.T
	ctx    context.Context
	id     string
	client kubernetes.Interface
	store  *store.Store
	a      *arbiter
	cfg    server.Config
	sched  string // the scheduler name of this test's Arbiter
	pool   store.NodePool
	dept   store.Department
}

var admin = store.Actor{Subject: "e2e", SubjectType: "user"}

// newEnv starts a test's Arbiter on the shared cluster with a node pool of nodes×gpus fake
// GPU nodes of its own.
func newEnv(t *testing.T, nodes, gpus int, configure ...func(*server.Config)) *env {
	t.Helper()
	return newEnvOn(t, sharedCluster(t), nodes, gpus, configure...)
}

// newEnvOn is newEnv on cluster c (a test that stops or freezes its control plane has one of
// its own, see ownCluster).
func newEnvOn(t *testing.T, c *devcluster.Cluster, nodes, gpus int, configure ...func(*server.Config)) *env {
	t.Helper()
	sum := sha256.Sum256([]byte(t.Name()))
	id := hex.EncodeToString(sum[:])[:8]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, id: id, client: c.Client(), sched: "arbiter-" + id}

	pool := devcluster.Pool{Name: "p" + id, Nodes: nodes, GPUs: gpus}
	if err := devcluster.AddNodes(ctx, e.client, []devcluster.Pool{pool}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < nodes; i++ {
			_ = e.client.CoreV1().Nodes().Delete(context.Background(), pool.NodeName(i), metav1.DeleteOptions{})
		}
	})
	if err := devcluster.WaitNodesReady(ctx, e.client, []devcluster.Pool{pool}); err != nil {
		t.Fatal(err)
	}

	dbURL := testdb.NewURL(t)
	pgxPool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pgxPool.Close)
	e.store = store.New(pgxPool)
	e.pool, err = e.store.CreateNodePool(ctx, store.NodePoolUpdate{
		Name: opt(pool.Name), LabelKey: opt(devcluster.LabelNodePool), LabelValue: opt(pool.Name),
	}, admin)
	if err != nil {
		t.Fatal(err)
	}
	e.dept, err = e.store.CreateDepartment(ctx, store.DepartmentUpdate{
		Name: opt("dept-" + id),
		// Generous, so each test's projects get the deserved quota the test gives them.
		Resources: store.Optional[[]store.QuotaInput]{Set: true, Value: &[]store.QuotaInput{{NodePoolID: &e.pool.ID, Deserved: 1000}}},
	}, admin)
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = server.Config{DatabaseURL: dbURL, Kubeconfig: c.Kubeconfig(), SchedulerName: e.sched}
	for _, f := range configure {
		f(&e.cfg)
	}
	e.a = startArbiter(t, e.cfg)
	return e
}

func opt[T any](v T) store.Optional[T] { return store.Optional[T]{Set: true, Value: &v} }

// project creates a project with its own namespace, a deserved quota in the test's pool and a
// policy, and returns the namespace.
func (e *env) project(name string, deserved int, policy store.PolicyUpdate) string {
	e.t.Helper()
	ns := name + "-" + e.id
	if _, err := e.client.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	limit := -1
	_, err := e.store.CreateProject(e.ctx, store.ProjectUpdate{
		Name: opt(name + "-" + e.id), DepartmentID: opt(e.dept.ID), Namespaces: opt([]string{ns}),
		NodePools: opt([]uuid.UUID{e.pool.ID}),
		Resources: opt([]store.QuotaInput{{NodePoolID: &e.pool.ID, Deserved: deserved, Limit: &limit}}),
		Policy:    policy,
	}, admin)
	if err != nil {
		e.t.Fatal(err)
	}
	return ns
}

// jobSpec describes a Job of one-GPU pods.
type jobSpec struct {
	name        string
	namespace   string
	pods        int32
	gpus        int64
	runSeconds  string // "" runs until deleted
	labels      map[string]string
	annotations map[string]string
	suspend     *bool
	deadline    int64 // spec.activeDeadlineSeconds; 0: none
}

// labels builds a workload's labels: priority and preemptibility as users set them.
func labels(priority, preemptibility string) map[string]string {
	l := map[string]string{}
	if priority != "" {
		l["priorityClassName"] = priority
	}
	if preemptibility != "" {
		l["kai.scheduler/preemptibility"] = preemptibility
	}
	return l
}

// job creates the Job s describes; edits change it before it is created (a node selector, a
// pod template's annotations).
func (e *env) job(s jobSpec, edits ...func(*batchv1.Job)) *batchv1.Job {
	e.t.Helper()
	if s.pods == 0 {
		s.pods = 1
	}
	if s.gpus == 0 {
		s.gpus = 1
	}
	b := objects.Job(s.name, s.namespace).Pods(s.pods).GPUs(s.gpus).CPU("1").Labels(s.labels).Annotations(s.annotations).
		Suspend(s.suspend).SchedulerName(e.sched)
	if s.runSeconds != "" {
		b.PodAnnotation(devcluster.AnnotationRunSeconds, s.runSeconds)
	}
	job := b.Obj()
	if s.deadline > 0 {
		job.Spec.ActiveDeadlineSeconds = &s.deadline
	}
	for _, edit := range edits {
		edit(job)
	}
	created, err := e.client.BatchV1().Jobs(s.namespace).Create(e.ctx, job, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

// jobPods lists the pods of a Job.
func (e *env) jobPods(namespace, job string) []corev1.Pod {
	e.t.Helper()
	list, err := e.client.CoreV1().Pods(namespace).List(e.ctx, metav1.ListOptions{LabelSelector: "job-name=" + job})
	if err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

// running counts a Job's pods that are bound and not finished.
func (e *env) running(namespace, job string) int {
	n := 0
	for _, p := range e.jobPods(namespace, job) {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// eventually waits until cond holds, failing the test after timeout with what was awaited.
func (e *env) eventually(what string, timeout time.Duration, cond func() bool) {
	e.t.Helper()
	poll.Until(e.t, what, timeout, cond)
}

// startedAt is when a Job's first pod started (status.startTime), or zero.
func (e *env) startedAt(namespace, job string) time.Time {
	var first time.Time
	for _, p := range e.jobPods(namespace, job) {
		if p.Status.StartTime != nil && (first.IsZero() || p.Status.StartTime.Time.Before(first)) {
			first = p.Status.StartTime.Time
		}
	}
	return first
}

// pendingReason is the PodScheduled=False reason of a Job's first pending pod.
func (e *env) pendingReason(namespace, job string) (string, string) {
	for _, p := range e.jobPods(namespace, job) {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return c.Reason, c.Message
			}
		}
	}
	return "", ""
}

// events lists the Kubernetes events recorded on an object, oldest first, as "Reason: message".
func (e *env) events(namespace, name string) []string {
	list, err := e.client.CoreV1().Events(namespace).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].FirstTimestamp.Before(&list.Items[j].FirstTimestamp) })
	var out []string
	for _, ev := range list.Items {
		out = append(out, ev.Reason+": "+ev.Message)
	}
	return out
}

func hasEvent(events []string, prefix string) bool {
	for _, ev := range events {
		if strings.HasPrefix(ev, prefix) {
			return true
		}
	}
	return false
}

func fmtEvents(events []string) string { return fmt.Sprintf("%q", events) }

// admittedAt is when Arbiter recorded a workload's (first) admission, from its history.
func (e *env) admittedAt(uid string) time.Time {
	e.t.Helper()
	events, err := e.store.WorkloadEvents(e.ctx, uid)
	if err != nil {
		return time.Time{}
	}
	for _, ev := range events {
		if ev.Kind == "Admitted" {
			return ev.At
		}
	}
	return time.Time{}
}

// record is a workload's record as Arbiter keeps it.
func (e *env) record(uid string) store.WorkloadRecord {
	e.t.Helper()
	r, err := e.store.WorkloadRecord(e.ctx, uid)
	if err != nil {
		e.t.Fatalf("workload %s has no record: %v", uid, err)
	}
	return r
}

// history lists a workload's event kinds, oldest first.
func (e *env) history(uid string) []string {
	e.t.Helper()
	events, err := e.store.WorkloadEvents(e.ctx, uid)
	if err != nil {
		return nil
	}
	var kinds []string
	for _, ev := range events {
		kinds = append(kinds, ev.Kind)
	}
	return kinds
}
