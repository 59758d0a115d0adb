package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/scheduler"
)

// statusWrites counts the pod status writes a client sends (PATCH pods/<name>/status), by pod
// and by the reason of the condition each writes.
type statusWrites struct {
	mu    sync.Mutex
	byPod map[string]map[string]int
}

func (w *statusWrites) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		parts := strings.Split(req.URL.Path, "/") // /api/v1/namespaces/<ns>/pods/<name>/status
		if n := len(parts); req.Method == http.MethodPatch && n >= 3 && parts[n-1] == "status" && parts[n-3] == "pods" && req.GetBody != nil {
			reason := "?"
			if body, err := req.GetBody(); err == nil {
				var patch struct {
					Status struct{ Conditions []corev1.PodCondition } `json:"status"`
				}
				if raw, err := io.ReadAll(body); err == nil && json.Unmarshal(raw, &patch) == nil && len(patch.Status.Conditions) == 1 {
					reason = patch.Status.Conditions[0].Reason
				}
			}
			w.mu.Lock()
			if w.byPod[parts[n-2]] == nil {
				w.byPod[parts[n-2]] = map[string]int{}
			}
			w.byPod[parts[n-2]][reason]++
			w.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// gangCluster is a local control plane with two nodes of 8 GPUs and Arbiter's scheduler
// running against it, its project "team" owning namespace ns, the pod status writes of the
// scheduler counted.
type gangCluster struct {
	ctx    context.Context
	client kubernetes.Interface
	sched  *Scheduler
	writes *statusWrites
}

func startGangCluster(t *testing.T) *gangCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	dir, err := os.MkdirTemp("", "arbiter-gang-") // short: the control plane's sockets live there
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: dir, Nodes: "gang=2x8"})
	if err != nil {
		t.Fatalf("local control plane: %v", err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = cluster.Stop(stopCtx)
	})
	writes := &statusWrites{byPod: map[string]map[string]int{}}
	cfg := rest.CopyConfig(cluster.RESTConfig())
	cfg.Wrap(writes.wrap)
	s, err := New(Options{SchedulerName: "arbiter", Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		LoadSettings: func(context.Context) (*Settings, error) { return foreseeSettings(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the scheduler ended with %v", err)
		}
	})
	g := &gangCluster{ctx: ctx, client: cluster.Client(), sched: s, writes: writes}
	if _, err := g.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return g
}

// pods lists the pods labelled app=name.
func (g *gangCluster) pods(t *testing.T, name string) []corev1.Pod {
	t.Helper()
	list, err := g.client.CoreV1().Pods("ns").List(g.ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// allBound waits until n pods labelled app=name are bound.
func (g *gangCluster) allBound(t *testing.T, name string, n int) {
	t.Helper()
	poll.UntilNil(t, name+"'s gang is bound whole", 2*time.Minute, func() error {
		bound := 0
		for _, p := range g.pods(t, name) {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		if bound < n {
			return fmt.Errorf("%d of %d pods bound", bound, n)
		}
		return nil
	})
}

// writtenAtMost checks that each pod labelled app=name had the condition of each reason
// written at most most times, and logs what was written.
func (g *gangCluster) writtenAtMost(t *testing.T, name string, most int) {
	t.Helper()
	g.writes.mu.Lock()
	defer g.writes.mu.Unlock()
	total, pods := 0, 0
	for _, p := range g.pods(t, name) {
		pods++
		for reason, n := range g.writes.byPod[p.Name] {
			total += n
			if n > most {
				t.Errorf("pod %s: its %s condition was written %d times, want at most %d", p.Name, reason, n, most)
			}
		}
	}
	t.Logf("%d status writes for %d pods of %s", total, pods, name)
}

// TestS23_AWaitingGangsPodsAreToldWhyOncePerReason: each pod of a waiting gang is told why it
// waits in its PodScheduled condition, once for each reason, however the numbers the sentence
// gives change meanwhile (a sentence that changes while the reason stays is written again at
// most once each pendingRefresh).
func TestS23_AWaitingGangsPodsAreToldWhyOncePerReason(t *testing.T) {
	g := startGangCluster(t)

	// A Job of 16 one-GPU pods waits for its whole gang while the real Job controller makes
	// its pods as a pod quota, raised four pods at a time, lets it (one by one, as each
	// creation updates the quota).
	t.Run("a gang forming", func(t *testing.T) {
		const gang, step = 16, 4
		quota := func(pods int) {
			q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: "ns"},
				Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(int64(pods), resource.DecimalSI)}}}
			if pods == step {
				if _, err := g.client.CoreV1().ResourceQuotas("ns").Create(g.ctx, q, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				poll.Until(t, "the pod quota is in force", time.Minute, func() bool {
					got, err := g.client.CoreV1().ResourceQuotas("ns").Get(g.ctx, "pods", metav1.GetOptions{})
					return err == nil && got.Status.Hard.Pods().Value() == int64(pods)
				})
				return
			}
			got, err := g.client.CoreV1().ResourceQuotas("ns").Get(g.ctx, "pods", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got.Spec = q.Spec
			if _, err := g.client.CoreV1().ResourceQuotas("ns").Update(g.ctx, got, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		quota(step)
		began := time.Now()
		if _, err := g.client.BatchV1().Jobs("ns").Create(g.ctx, gpuJob("train", gang, 1, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for exist := step; exist < gang; exist += step {
			poll.UntilNil(t, "the pods that exist are told why they wait", 2*time.Minute, func() error {
				told := 0
				for _, p := range g.pods(t, "train") {
					for _, c := range p.Status.Conditions {
						if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
							told++
						}
					}
				}
				if told < exist {
					return fmt.Errorf("%d of the %d pods that should exist are told why they wait", told, exist)
				}
				return nil
			})
			quota(exist + step)
		}
		g.allBound(t, "train", gang)
		g.writtenAtMost(t, "train", 1+int(time.Since(began)/pendingRefresh))
		if err := g.client.CoreV1().ResourceQuotas("ns").Delete(g.ctx, "pods", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		background := metav1.DeletePropagationBackground
		if err := g.client.BatchV1().Jobs("ns").Delete(g.ctx, "train", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
			t.Fatal(err)
		}
		zero := int64(0)
		if err := g.client.CoreV1().Pods("ns").DeleteCollection(g.ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{LabelSelector: "app=train"}); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, "the Job's pods are gone", time.Minute, func() bool { return len(g.pods(t, "train")) == 0 })
	})

	// A Job of 12 one-GPU pods waits for capacity while eight GPUs are held by other pods,
	// which end one by one: the free GPUs its sentence gives go from 8 to 11 before it starts.
	t.Run("a gang waiting for capacity", func(t *testing.T) {
		for i := range 8 {
			p := &gpuJob("filler", 1, 1, nil).Spec.Template
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("filler-%d", i), Namespace: "ns", Labels: map[string]string{"app": "filler"}}, Spec: p.Spec}
			pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
			if _, err := g.client.CoreV1().Pods("ns").Create(g.ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		g.allBound(t, "filler", 8)
		began := time.Now()
		job, err := g.client.BatchV1().Jobs("ns").Create(g.ctx, gpuJob("wide", 12, 1, nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		zero := int64(0)
		for free := 8; free < 12; free++ {
			poll.UntilNil(t, "the cycle sees the free GPUs", time.Minute, func() error {
				r := g.sched.Last()
				for _, pw := range r.Plan.Pending {
					if pw.Workload == string(job.UID) && strings.Contains(pw.Message, fmt.Sprintf("(%d free", free)) {
						return nil
					}
				}
				return fmt.Errorf("the last cycle has not yet seen %d GPUs free for all the Job's pods", free)
			})
			poll.UntilNil(t, "the Job's pods are told why they wait", time.Minute, func() error {
				for _, p := range g.pods(t, "wide") {
					if !slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
						return c.Type == corev1.PodScheduled && c.Reason == string(scheduler.InsufficientCapacity)
					}) {
						return fmt.Errorf("pod %s is not told", p.Name)
					}
				}
				return nil
			})
			if err := g.client.CoreV1().Pods("ns").Delete(g.ctx, fmt.Sprintf("filler-%d", free-8), metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
		}
		g.allBound(t, "wide", 12)
		g.writtenAtMost(t, "wide", 1+int(time.Since(began)/pendingRefresh))
	})
}
