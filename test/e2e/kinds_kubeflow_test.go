package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/store"
)

// Kubeflow's kinds with their real controllers: training-operator's PyTorchJob and MPIJob
// (kubeflow.org/v1; suspended through runPolicy.suspend) and Trainer's TrainJob (run as a
// JobSet; suspended through spec.suspend).

// TestKindPyTorchJobWithTrainingOperator: a PyTorchJob of a master and two workers is one gang
// of 3 under its own labels, suspended whole for urgent work and resumed by its controller.
func TestKindPyTorchJobWithTrainingOperator(t *testing.T) {
	t.Parallel()
	testKindWithItsController(t, kindCase{
		kind: "PyTorchJob", gvr: pyTorchJobGVR,
		manifest: func(name, scheduler string) string {
			return fmt.Sprintf(`
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: %[1]s}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template: {spec: {schedulerName: %[2]s, containers: [%[3]s]}}
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template: {spec: {schedulerName: %[2]s, containers: [%[3]s]}}
`, name, scheduler, gpuContainer("pytorch"))
		},
		pods:          func(name string) string { return "training.kubeflow.org/job-name=" + name },
		suspendSwitch: []string{"spec", "runPolicy", "suspend"},
	})
}

// TestKindMPIJobWithTrainingOperator: training-operator's MPIJob (kubeflow.org/v1, not
// mpi-operator's v2beta1) of a launcher and two workers is one gang of 3.
func TestKindMPIJobWithTrainingOperator(t *testing.T) {
	t.Parallel()
	testKindWithItsController(t, kindCase{
		kind: "MPIJob", gvr: mpiJobGVR,
		manifest: func(name, scheduler string) string {
			return fmt.Sprintf(`
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: %[1]s}
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template: {spec: {schedulerName: %[2]s, containers: [%[3]s]}}
    Worker:
      replicas: 2
      template: {spec: {schedulerName: %[2]s, containers: [%[4]s]}}
`, name, scheduler, gpuContainer("launcher"), gpuContainer("worker"))
		},
		pods:          func(name string) string { return "training.kubeflow.org/job-name=" + name },
		suspendSwitch: []string{"spec", "runPolicy", "suspend"},
	})
}

// trainingRuntime is a TrainingRuntime of three nodes whose pods name scheduler. Kubeflow's
// own runtimes name no scheduler, and the local cluster runs no kube-scheduler: a runtime is
// where a team says which scheduler its TrainJobs' pods use (docs/kubernetes.md).
func trainingRuntime(name, scheduler string) string {
	return fmt.Sprintf(`
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: %[1]s}
spec:
  mlPolicy:
    numNodes: 3
    torch: {}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                schedulerName: %[2]s
                containers: [%[3]s]
`, name, scheduler, gpuContainer("node"))
}

// TestKindTrainJobWithTrainer: a TrainJob of three nodes, run by Trainer as a JobSet, is one
// workload under the TrainJob with a gang of 3, suspended whole through the TrainJob's switch.
func TestKindTrainJobWithTrainer(t *testing.T) {
	t.Parallel()
	testKindWithItsController(t, kindCase{
		kind: "TrainJob", gvr: trainJobGVR,
		before: func(e *env, ns string) { e.create(trainRuntimeGVR, ns, trainingRuntime("torch-arbiter", e.sched)) },
		manifest: func(name, _ string) string {
			return fmt.Sprintf(`
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: %s}
spec:
  runtimeRef: {name: torch-arbiter, apiGroup: trainer.kubeflow.org, kind: TrainingRuntime}
`, name)
		},
		// Trainer names the JobSet after the TrainJob.
		pods:          func(name string) string { return "jobset.sigs.k8s.io/jobset-name=" + name },
		suspendSwitch: []string{"spec", "suspend"},
	})
}

// TestKindPyTorchJobReclaimedWholeAndRemadeByItsController: in terminate mode a PyTorchJob
// that borrowed GPUs beyond its project's deserved quota is reclaimed whole when their owner
// needs one (S17): all its pods go, training-operator makes them again, and they wait as one
// gang until the owner's work is done, then start together.
func TestKindPyTorchJobReclaimedWholeAndRemadeByItsController(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 3)
	borrower := e.project("borrower", 1, store.PolicyUpdate{})
	owner := e.project("owner", 2, store.PolicyUpdate{})
	job := e.create(pyTorchJobGVR, borrower, fmt.Sprintf(`
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: borrowed}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template: {spec: {schedulerName: %[1]s, containers: [%[2]s]}}
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template: {spec: {schedulerName: %[1]s, containers: [%[2]s]}}
`, e.sched, gpuContainer("pytorch")), labels("low", "preemptible"))
	selector := "training.kubeflow.org/job-name=borrowed"
	e.eventually("the PyTorchJob runs on all 3 GPUs, 2 of them borrowed", time.Minute, func() bool {
		return boundCount(e.kindPods(borrower, selector)) == 3
	})
	first := map[types.UID]bool{}
	for _, p := range e.kindPods(borrower, selector) {
		first[p.UID] = true
	}

	e.job(jobSpec{name: "mine", namespace: owner, runSeconds: "10"})
	e.eventually("the owner's Job runs", time.Minute, func() bool { return e.running(owner, "mine") == 1 })
	e.eventually("none of the PyTorchJob's first pods is left", time.Minute, func() bool {
		for _, p := range e.kindPods(borrower, selector) {
			if first[p.UID] {
				return false
			}
		}
		return true
	})
	// The owner's Job holds one GPU for a while yet: 2 are free, and the gang needs 3.
	for _, p := range e.kindPods(borrower, selector) {
		if p.Spec.NodeName != "" {
			t.Errorf("pod %s is bound while the owner's Job runs: the gang of 3 was not kept whole", p.Name)
		}
	}
	e.eventually("the PyTorchJob's history records the reclaim", 10*time.Second, func() bool {
		return slices.Contains(e.history(string(job.GetUID())), "Reclaimed")
	})
	e.eventually("training-operator makes the 3 pods again and they start together once the owner's Job is done", 2*time.Minute, func() bool {
		pods := e.kindPods(borrower, selector)
		for _, p := range pods {
			if first[p.UID] {
				return false
			}
		}
		return len(pods) == 3 && boundCount(pods) == 3
	})
}
