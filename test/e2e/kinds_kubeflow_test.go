package e2e

import (
	"fmt"
	"testing"
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
