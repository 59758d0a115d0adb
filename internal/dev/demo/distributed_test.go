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

// On a local control plane running the demo's operators, the demo submits one PyTorchJob and
// one JobSet at a time: training-operator makes the PyTorchJob a master and a worker pod, and
// JobSet's controller makes the JobSet two Jobs, whose pods the Job controller makes, all for
// the demo's scheduler.
func TestDemoRunsAPyTorchJobAndAJobSetThroughTheirControllers(t *testing.T) {
	ctx := context.Background()
	c, err := devcluster.Start(ctx, devcluster.Options{Dir: t.TempDir(), Operators: Operators, Progress: os.Stderr, Timeout: 4 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(context.Background()) })
	for _, name := range []string{pyTorchProject, jobSetProject} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := c.Client().CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
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
	podsOf := func(what, namespace, selector string, n int) []corev1.Pod {
		t.Helper()
		var pods []corev1.Pod
		poll.UntilNil(t, what, time.Minute, func() error {
			list, err := c.Client().CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				return err
			}
			if len(list.Items) != n {
				return fmt.Errorf("%d pods", len(list.Items))
			}
			pods = list.Items
			return nil
		})
		return pods
	}
	checkPods := func(pods []corev1.Pod, wantGPUs int64) {
		t.Helper()
		for _, p := range pods {
			gpus := p.Spec.Containers[0].Resources.Requests[devcluster.ResourceGPU]
			if p.Spec.SchedulerName != "arbiter" || p.Labels[Label] != "true" || gpus.Value() != wantGPUs {
				t.Errorf("pod %s: scheduler %q, demo label %q, %s GPUs; want arbiter, true, %d",
					p.Name, p.Spec.SchedulerName, p.Labels[Label], gpus.String(), wantGPUs)
			}
		}
	}
	checkPods(podsOf("the PyTorchJob's master and worker pods exist", pyTorchProject, "training.kubeflow.org/job-name="+name, 2), pyTorchGPUs)

	sets, err := dyn.Resource(jobSets).Namespace(jobSetProject).List(ctx, metav1.ListOptions{LabelSelector: Label + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sets.Items) != 1 {
		t.Fatalf("%d demo JobSets, want 1", len(sets.Items))
	}
	set := sets.Items[0].GetName()
	bySet := "jobset.sigs.k8s.io/jobset-name=" + set
	poll.UntilNil(t, "the JobSet's two Jobs exist", time.Minute, func() error {
		list, err := c.Client().BatchV1().Jobs(jobSetProject).List(ctx, metav1.ListOptions{LabelSelector: bySet})
		if err != nil {
			return err
		}
		if len(list.Items) != jobSetReplicas {
			return fmt.Errorf("%d Jobs", len(list.Items))
		}
		return nil
	})
	checkPods(podsOf("the JobSet's Jobs' pods exist", jobSetProject, bySet, jobSetReplicas), jobSetGPUs)
}
