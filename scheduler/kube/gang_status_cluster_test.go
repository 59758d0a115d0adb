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
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
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

// TestS23_AFormingGangsPodsAreToldWhyOncePerReason: a Job of 16 one-GPU pods waits for its
// whole gang before it is placed, while the real Job controller makes its pods as a pod quota,
// raised four pods at a time, lets it (one by one, as each creation updates the quota). Each pod is told why it waits in its
// PodScheduled condition, written once for each reason it waits for: the gang growing around
// it does not write it again.
func TestS23_AFormingGangsPodsAreToldWhyOncePerReason(t *testing.T) {
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
	client := cluster.Client()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const gang, step = 16, 4
	quota := func(pods int) {
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: "ns"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(int64(pods), resource.DecimalSI)}}}
		if pods == step {
			if _, err := client.CoreV1().ResourceQuotas("ns").Create(ctx, q, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			poll.Until(t, "the pod quota is in force", time.Minute, func() bool {
				got, err := client.CoreV1().ResourceQuotas("ns").Get(ctx, "pods", metav1.GetOptions{})
				return err == nil && got.Status.Hard.Pods().Value() == int64(pods)
			})
			return
		}
		got, err := client.CoreV1().ResourceQuotas("ns").Get(ctx, "pods", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Spec = q.Spec
		if _, err := client.CoreV1().ResourceQuotas("ns").Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := func() []corev1.Pod {
		list, err := client.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{LabelSelector: "app=train"})
		if err != nil {
			t.Fatal(err)
		}
		return list.Items
	}
	quota(step)
	if _, err := client.BatchV1().Jobs("ns").Create(ctx, gpuJob("train", gang, 1, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for exist := step; exist < gang; exist += step {
		poll.UntilNil(t, "the pods that exist are told why they wait", 2*time.Minute, func() error {
			told := 0
			for _, p := range pods() {
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
	poll.UntilNil(t, "the Job's gang is bound whole", 2*time.Minute, func() error {
		bound := 0
		for _, p := range pods() {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		if bound < gang {
			return fmt.Errorf("%d of %d pods bound", bound, gang)
		}
		return nil
	})

	writes.mu.Lock()
	defer writes.mu.Unlock()
	total := 0
	for pod, byReason := range writes.byPod {
		for reason, n := range byReason {
			total += n
			if n > 1 {
				t.Errorf("pod %s: its %s condition was written %d times, want once", pod, reason, n)
			}
		}
	}
	t.Logf("%d status writes for %d pods: %v", total, gang, writes.byPod)
}
