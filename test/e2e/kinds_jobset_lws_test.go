package e2e

import (
	"fmt"
	"testing"
)

// TestKindJobSetWithItsController: a JobSet of a leader Job and a workers Job of parallelism 2
// is one gang of 3 (replicated jobs × replicas × parallelism), suspended whole through
// spec.suspend.
func TestKindJobSetWithItsController(t *testing.T) {
	t.Parallel()
	testKindWithItsController(t, kindCase{
		kind: "JobSet", gvr: jobSetGVR,
		manifest: func(name, scheduler string) string {
			return fmt.Sprintf(`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: %[1]s}
spec:
  replicatedJobs:
  - name: leader
    replicas: 1
    template:
      spec:
        parallelism: 1
        completions: 1
        template: {spec: {schedulerName: %[2]s, restartPolicy: Never, containers: [%[3]s]}}
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: 2
        completions: 2
        template: {spec: {schedulerName: %[2]s, restartPolicy: Never, containers: [%[3]s]}}
`, name, scheduler, gpuContainer("main"))
		},
		pods:          func(name string) string { return "jobset.sigs.k8s.io/jobset-name=" + name },
		suspendSwitch: []string{"spec", "suspend"},
	})
}

// TestKindLeaderWorkerSetWithItsController: a LeaderWorkerSet group of size 3 (the leader
// counted) is a gang of 3. The kind has no suspend switch: preempted, its pods are evicted
// together and its controller makes them again.
func TestKindLeaderWorkerSetWithItsController(t *testing.T) {
	t.Parallel()
	testKindWithItsController(t, kindCase{
		kind: "LeaderWorkerSet", gvr: lwsGVR,
		manifest: func(name, scheduler string) string {
			return fmt.Sprintf(`
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: %[1]s}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 3
    workerTemplate: {spec: {schedulerName: %[2]s, containers: [%[3]s]}}
`, name, scheduler, gpuContainer("main"))
		},
		pods: func(name string) string { return "leaderworkerset.sigs.k8s.io/name=" + name },
	})
}
