package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
)

// TestFailover_NewLeaderRecordsAFinishedPyTorchJob: a leader binds a PyTorchJob's master and
// workers and dies before it writes the workload's record; the job runs to its end under
// training-operator while no replica leads. The new leader records it from the cluster,
// Completed, a gang of 3 with its 3 GPUs, finished when the operator said it succeeded.
func TestFailover_NewLeaderRecordsAFinishedPyTorchJob(t *testing.T) {
	t.Parallel()
	e, ns, a := leaderHoldingRecords(t, "unrecorded-kinds", 3)

	template := fmt.Sprintf(`{metadata: {annotations: {%s: "2"}}, spec: {schedulerName: %s, containers: [%s]}}`,
		devcluster.AnnotationRunSeconds, e.sched, gpuContainer("pytorch"))
	job := e.create(pyTorchJobGVR, ns, fmt.Sprintf(`
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: short}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, restartPolicy: Never, template: %[1]s}
    Worker: {replicas: 2, restartPolicy: Never, template: %[1]s}
`, template))
	e.eventually("replica a binds the PyTorchJob's 3 pods and says so", time.Minute, func() bool {
		by, _ := e.scheduledBy(ns)
		return len(by["a"]) == 3
	})
	a.signal(t, syscall.SIGKILL)
	<-a.exit
	var succeededAt time.Time
	e.eventually("training-operator says the PyTorchJob succeeded", time.Minute, func() bool {
		u, err := e.dynamicClient().Resource(pyTorchJobGVR).Namespace(ns).Get(e.ctx, "short", metav1.GetOptions{})
		if err != nil {
			return false
		}
		conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conditions {
			if m, _ := c.(map[string]any); m["type"] == "Succeeded" && m["status"] == "True" {
				succeededAt, err = time.Parse(time.RFC3339, fmt.Sprint(m["lastTransitionTime"]))
				return err == nil
			}
		}
		return false
	})
	if _, err := e.store.WorkloadRecord(e.ctx, string(job.GetUID())); err == nil {
		t.Fatal("replica a wrote the PyTorchJob's record before it died: the test would check nothing")
	}

	e.startReplica("b")
	e.eventually("replica b leads", time.Minute, func() bool { return e.leaseHolder() == "b" })
	rec := e.finishedRecord("the PyTorchJob that finished before the new leader took over", string(job.GetUID()), time.Minute)
	type summary struct {
		Phase, Kind     string
		Gang, Requested int
		Finished        time.Time
		Started         bool
	}
	got := summary{rec.Phase, rec.Kind, rec.Gang, rec.RequestedGPUs, *rec.FinishedAt, rec.StartedAt != nil}
	want := summary{"Completed", "PyTorchJob", 3, 3, succeededAt, true}
	if diff := cmp.Diff(want, got, timesEqual); diff != "" {
		t.Errorf("the finished PyTorchJob's record (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Queued", "Admitted", "Completed"}, e.history(string(job.GetUID()))); diff != "" {
		t.Errorf("the finished PyTorchJob's history (-want +got):\n%s", diff)
	}
}
