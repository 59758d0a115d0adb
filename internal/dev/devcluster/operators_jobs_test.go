package devcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

var (
	mpiJobGVR = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "mpijobs"}
	rayJobGVR = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}
)

// An MPIJob of training-operator (kubeflow.org/v1, not mpi-operator's v2beta1) gets its
// launcher and worker pods.
func TestMPIJobControllerCreatesLauncherAndWorkers(t *testing.T) {
	c := clusterWithOperators(t)
	ns := testNamespace(t, c.Client())
	job := createFromYAML(t, c, mpiJobGVR, ns, `
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: allreduce}
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          schedulerName: `+nothingScheduler+`
          containers: [{name: launcher, image: mpioperator/mpi-pi}]
    Worker:
      replicas: 2
      template:
        spec:
          schedulerName: `+nothingScheduler+`
          containers: [{name: worker, image: mpioperator/mpi-pi}]
`)
	pods := waitPods(t, c, ns, "training.kubeflow.org/job-name=allreduce", "allreduce-launcher", "allreduce-worker-0", "allreduce-worker-1")
	checkMadeBy(t, pods, job, "MPIJob")
}

// A RayJob's controller (KubeRay) creates the RayCluster it runs on. Its submitter pod waits for
// the Ray dashboard, which nothing serves here.
func TestRayJobControllerCreatesItsRayCluster(t *testing.T) {
	c := clusterWithOperators(t)
	ns := testNamespace(t, c.Client())
	rj := createFromYAML(t, c, rayJobGVR, ns, `
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: batch}
spec:
  entrypoint: python -c "print(1)"
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          schedulerName: `+nothingScheduler+`
          containers: [{name: ray-head, image: rayproject/ray}]
    workerGroupSpecs:
    - groupName: cpu
      replicas: 1
      minReplicas: 1
      maxReplicas: 1
      rayStartParams: {}
      template:
        spec:
          schedulerName: `+nothingScheduler+`
          containers: [{name: ray-worker, image: rayproject/ray}]
`)
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	var cluster string
	poll.UntilNil(t, "the RayJob's RayCluster exists", 60*time.Second, func() error {
		list, err := dyn.Resource(rayClusterGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for i := range list.Items {
			if ownedBy(&list.Items[i], rj) {
				cluster = list.Items[i].GetName()
				return nil
			}
		}
		return fmt.Errorf("%d RayClusters, none controlled by the RayJob", len(list.Items))
	})
	poll.UntilNil(t, "the RayJob's cluster has its head pod", 60*time.Second, func() error {
		pods, err := c.Client().CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "ray.io/node-type=head,ray.io/cluster=" + cluster})
		if err != nil {
			return err
		}
		if len(pods.Items) != 1 {
			return fmt.Errorf("%d head pods", len(pods.Items))
		}
		return nil
	})
}

func TestOperatorStampFollowsItsPin(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jobset, _ := lookupOperator(OperatorJobSet)
	lws, _ := lookupOperator(OperatorLWS)
	stamp := func(op operator) string {
		t.Helper()
		s, err := operatorStamp(dir, op)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	write("go.mod", "module x\ntool sigs.k8s.io/jobset\nrequire sigs.k8s.io/jobset v0.10.1\n")
	write("go.sum", "a\n")
	s0 := stamp(jobset)
	if again := stamp(jobset); again != s0 {
		t.Fatalf("the same sources stamp differently: %s, %s", s0, again)
	}
	if stamp(lws) == s0 {
		t.Errorf("two operators built from one directory have one stamp")
	}
	write("go.mod", "module x\ntool sigs.k8s.io/jobset\nrequire sigs.k8s.io/jobset v0.11.0\n")
	s1 := stamp(jobset)
	if s1 == s0 {
		t.Errorf("a new pin in go.mod leaves the stamp as it was")
	}
	write("go.sum", "b\n")
	if stamp(jobset) == s1 {
		t.Errorf("a changed go.sum leaves the stamp as it was")
	}
	if v, err := requiredVersion(filepath.Join(dir, "go.mod"), "sigs.k8s.io/jobset"); err != nil || v != "v0.11.0" {
		t.Errorf("requiredVersion: %q, %v; want v0.11.0", v, err)
	}
}
