//go:build peers

// The peers' tests build and run Kueue, which CI does not build (`make test` leaves these out):
// run them with go test -tags peers -run Kueue ./internal/dev/devcluster/.

package devcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

var (
	kueueFlavorGVR       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}
	kueueClusterQueueGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	kueueLocalQueueGVR   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
	kueueWorkloadGVR     = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
)

// Kueue, run as a process against the local control plane with its webhooks registered by
// URL, suspends a Job created in a LocalQueue as the Job is created (its Job webhook), admits
// it when its ClusterQueue has the quota for it (it unsuspends the Job), and leaves one over
// that quota suspended, its Workload pending for want of quota.
func TestKueueSuspendsAQueuedJobAndAdmitsItWithinQuota(t *testing.T) {
	dir := t.TempDir()
	c, err := Start(context.Background(), Options{Dir: dir, Operators: []string{OperatorKueue}, Progress: os.Stderr, Timeout: 4 * time.Minute})
	if err != nil {
		t.Fatalf("starting a cluster with Kueue: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	})
	ns := testNamespace(t, c.Client())
	createFromYAML(t, c, kueueFlavorGVR, "", `
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
`)
	createFromYAML(t, c, kueueClusterQueueGVR, "", `
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 4}
`)
	createFromYAML(t, c, kueueLocalQueueGVR, ns, `
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-a}
spec: {clusterQueue: team-a}
`)
	jobs := c.Client().BatchV1().Jobs(ns)
	for _, j := range []struct {
		name string
		cpu  string
	}{{"fits", "1"}, {"too-big", "8"}} {
		created, err := jobs.Create(context.Background(), queuedJob(j.name, "team-a", j.cpu), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating job %s: %v", j.name, err)
		}
		if created.Spec.Suspend == nil || !*created.Spec.Suspend {
			t.Fatalf("job %s was created unsuspended in a LocalQueue and stored unsuspended: Kueue's Job webhook did not run", j.name)
		}
	}

	poll.Until(t, "Kueue to unsuspend job fits", time.Minute, func() bool {
		j, err := jobs.Get(context.Background(), "fits", metav1.GetOptions{})
		return err == nil && j.Spec.Suspend != nil && !*j.Spec.Suspend
	})
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	var pendingMessage string
	poll.Until(t, "the Workload of job too-big to be pending for want of quota", time.Minute, func() bool {
		list, err := dyn.Resource(kueueWorkloadGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, w := range list.Items {
			if ownerJob(&w) != "too-big" {
				continue
			}
			status, reason, msg := condition(&w, "QuotaReserved")
			pendingMessage = msg
			return status == "False" && reason == "Pending"
		}
		return false
	})
	if j, err := jobs.Get(context.Background(), "too-big", metav1.GetOptions{}); err != nil || j.Spec.Suspend == nil || !*j.Spec.Suspend {
		t.Errorf("job too-big (8 CPU over a quota of 4) was unsuspended (err %v); its workload said %q", err, pendingMessage)
	}
}

// queuedJob is a one-pod Job requesting cpu in LocalQueue queue, as a user writes it: not
// suspended (Kueue's Job webhook suspends it).
func queuedJob(name, queue, cpu string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{KueueQueueNameLabel: queue}},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				SchedulerName: nothingScheduler,
				Containers: []corev1.Container{{Name: "main", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
			}},
		},
	}
}

// ownerJob returns the name of the Job that owns u, or "".
func ownerJob(u *unstructured.Unstructured) string {
	for _, r := range u.GetOwnerReferences() {
		if r.Kind == "Job" {
			return r.Name
		}
	}
	return ""
}

// condition returns the status, reason and message of u's condition of type typ.
func condition(u *unstructured.Unstructured, typ string) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}

// Kueue runs its controllers with the concurrency of its shipped configuration
// (config/components/manager/controller_manager_config.yaml: five Job reconcilers, ten Workload
// reconcilers), not controller-runtime's one worker each, which a configuration file without
// them gets: with one Job reconciler, a benchmark measures a Kueue nobody runs.
func TestKueueRunsItsShippedControllerConcurrency(t *testing.T) {
	dir := t.TempDir()
	c, err := Start(context.Background(), Options{Dir: dir, Operators: []string{OperatorKueue}, Progress: os.Stderr, Timeout: 4 * time.Minute})
	if err != nil {
		t.Fatalf("starting a cluster with Kueue: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	})
	want := map[string]int{"job": 5, "workload-reconciler": 10, "clusterqueue-reconciler": 5, "localqueue-reconciler": 5}
	var got map[string]int
	poll.UntilNil(t, "Kueue's controllers to start their workers", time.Minute, func() error {
		got = map[string]int{}
		raw, err := os.ReadFile(filepath.Join(dir, "logs", OperatorKueue+".log"))
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(raw), "\n") {
			var entry struct {
				Logger  string `json:"logger"`
				Msg     string `json:"msg"`
				Workers int    `json:"worker count"`
			}
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "Starting workers" {
				if _, ok := want[entry.Logger]; ok {
					got[entry.Logger] = entry.Workers
				}
			}
		}
		if len(got) < len(want) {
			return fmt.Errorf("workers started so far: %v", got)
		}
		return nil
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Kueue's workers per controller (-shipped +running):\n%s", diff)
	}
}
