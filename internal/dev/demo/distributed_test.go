package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// On a local control plane running the demo's operators, the demo submits one PyTorchJob at a
// time, and training-operator makes it a master and a worker pod for the demo's scheduler.
func TestDemoRunsAPyTorchJobThroughItsController(t *testing.T) {
	ctx := context.Background()
	c, err := devcluster.Start(ctx, devcluster.Options{Dir: t.TempDir(), Operators: Operators, Progress: os.Stderr, Timeout: 4 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(context.Background()) })
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: pyTorchProject}}
	if _, err := c.Client().CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	d := &demoRunner{client: c.Client(), dyn: dyn, schedulerName: "arbiter", log: slog.New(slog.NewTextHandler(io.Discard, nil))}

	d.distributed(ctx)
	d.distributed(ctx) // one is unfinished: no second
	jobs, err := dyn.Resource(pyTorchJobs).Namespace(pyTorchProject).List(ctx, metav1.ListOptions{LabelSelector: Label + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Fatalf("%d demo PyTorchJobs, want 1", len(jobs.Items))
	}
	name := jobs.Items[0].GetName()
	var pods []corev1.Pod
	poll.UntilNil(t, "the PyTorchJob's master and worker pods exist", time.Minute, func() error {
		list, err := c.Client().CoreV1().Pods(pyTorchProject).List(ctx, metav1.ListOptions{LabelSelector: "training.kubeflow.org/job-name=" + name})
		if err != nil {
			return err
		}
		if len(list.Items) != 2 {
			return fmt.Errorf("%d pods", len(list.Items))
		}
		pods = list.Items
		return nil
	})
	for _, p := range pods {
		gpus := p.Spec.Containers[0].Resources.Requests[devcluster.ResourceGPU]
		if p.Spec.SchedulerName != "arbiter" || p.Labels[Label] != "true" || gpus.Value() != pyTorchGPUs {
			t.Errorf("pod %s: scheduler %q, demo label %q, %s GPUs; want arbiter, true, %d",
				p.Name, p.Spec.SchedulerName, p.Labels[Label], gpus.String(), pyTorchGPUs)
		}
	}
}
