package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/scheduler"
)

// TestFirstCycleDecidesFromTheWholeCluster: a scheduler starting on a backlog (as after a
// failover) decides its first cycle only once its cache holds every pod and node the API
// server has, so that what runs already counts against capacity and quota. On 20 nodes × 8
// GPUs, project team (deserved 100, limit 120) already runs 60 one-GPU pods, listed last
// (their names sort after the backlog's), and 600 of its one-GPU pods wait. The first cycle
// sees all 660 workloads and binds 60: the limit less what runs. Deciding from a partial
// list, it would not count the running pods and bind up to 120 (S13), and with the pending
// pods not all listed it would decide the project's order (S10) from part of its queue.
func TestFirstCycleDecidesFromTheWholeCluster(t *testing.T) {
	const nodes, running, waiting, limit = 20, 60, 600, 120
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	dir, err := os.MkdirTemp("", "arbiter-first-") // short: the control plane's sockets live there
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: dir, Nodes: fmt.Sprintf("first=%dx8", nodes)})
	if err != nil {
		t.Fatalf("local control plane: %v", err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = cluster.Stop(stopCtx)
	})
	client := cluster.Client()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: corev1.PodSpec{
			SchedulerName: "arbiter", NodeName: node,
			Containers: []corev1.Container{{Name: "main", Image: "example.invalid/run:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}, Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}},
		}}
	}
	create := func(n int, p func(i int) *corev1.Pod) {
		var wg sync.WaitGroup
		var failed atomic.Int64
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += 16 {
					if _, err := client.CoreV1().Pods("ns").Create(ctx, p(i), metav1.CreateOptions{}); err != nil {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if failed.Load() > 0 {
			t.Fatalf("%d pod creations failed", failed.Load())
		}
	}
	// Bound at creation, three to a node, as a previous leader left them.
	create(running, func(i int) *corev1.Pod {
		return pod(fmt.Sprintf("z-running-%03d", i), fmt.Sprintf("kwok-first-%d", i/3))
	})
	create(waiting, func(i int) *corev1.Pod { return pod(fmt.Sprintf("a-waiting-%03d", i), "") })

	settings := foreseeSettings()
	settings.Projects[0].Quotas["default"] = scheduler.Quota{Deserved: 100, Limit: limit, OverQuotaWeight: 2}
	first := make(chan *Result, 1)
	s, err := New(Options{SchedulerName: "arbiter", Config: cluster.RESTConfig(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		LoadSettings: func(context.Context) (*Settings, error) { return settings, nil },
		OnCycle: func(r *Result) {
			select {
			case first <- r:
			default:
			}
		}})
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

	var r *Result
	select {
	case r = <-first:
	case <-ctx.Done():
		t.Fatal("no cycle within the test's time")
	}
	if got := len(r.Snapshot.Workloads); got != running+waiting {
		t.Errorf("the first cycle saw %d workloads, want all %d (%d running, %d waiting)", got, running+waiting, running, waiting)
	}
	if got := len(r.Snapshot.Nodes); got != nodes {
		t.Errorf("the first cycle saw %d nodes, want %d", got, nodes)
	}
	if got := len(r.Plan.Binds); got != limit-running {
		t.Errorf("the first cycle bound %d pods, want %d: the limit %d less the %d running", got, limit-running, limit, running)
	}
	if len(r.Plan.Evictions) != 0 {
		t.Errorf("the first cycle evicted %d workloads, want none", len(r.Plan.Evictions))
	}
	// And the cluster agrees: the project holds its limit, no more.
	poll.UntilNil(t, "the project holds its limit in bound pods", time.Minute, func() error {
		list, err := client.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		bound := 0
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		if bound != limit {
			return fmt.Errorf("%d pods bound, want %d", bound, limit)
		}
		return nil
	})
}
