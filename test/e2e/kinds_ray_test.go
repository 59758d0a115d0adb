package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// KubeRay's kinds with their real controller. A RayJob's status comes from the Ray dashboard
// over HTTP, which kwok's simulated pods do not serve: its job never reports running or done
// here, so its test covers what Arbiter does with it (the gang of its RayCluster, its
// priority, suspend and resume), not its job's end.

// rayClusterSpec is a head and a worker group of minimum 2, each pod with one GPU: a gang of 3.
func rayClusterSpec(scheduler, indent string) string {
	spec := fmt.Sprintf(`headGroupSpec:
  rayStartParams: {}
  template: {spec: {schedulerName: %[1]s, containers: [%[2]s]}}
workerGroupSpecs:
- groupName: gpu
  replicas: 2
  minReplicas: 2
  maxReplicas: 2
  rayStartParams: {}
  template: {spec: {schedulerName: %[1]s, containers: [%[3]s]}}
`, scheduler, gpuContainer("ray-head"), gpuContainer("ray-worker"))
	out := ""
	for _, line := range strings.Split(strings.TrimSuffix(spec, "\n"), "\n") {
		out += indent + line + "\n"
	}
	return out
}

// TestKindRayClusterWithKubeRay: a RayCluster's head and its worker group's minimum are one
// gang of 3, suspended whole through spec.suspend.
func TestKindRayClusterWithKubeRay(t *testing.T) {
	t.Parallel()
	testKindWithItsController(t, kindCase{
		kind: "RayCluster", gvr: rayClusterGVR,
		manifest: func(name, scheduler string) string {
			return fmt.Sprintf("apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: %s}\nspec:\n%s", name, rayClusterSpec(scheduler, "  "))
		},
		pods:          func(name string) string { return "ray.io/cluster=" + name },
		suspendSwitch: []string{"spec", "suspend"},
	})
}

// TestKindRayJobWithKubeRay: a RayJob is the top owner of the RayCluster KubeRay makes for it,
// with that cluster's gang of 3; suspended (KubeRay allows it with shutdownAfterJobFinishes),
// its cluster goes, and resumed it is made again. Its submitter pod, made once the cluster is
// ready, names the test's scheduler too (KubeRay's default names none) and asks for no GPU.
func TestKindRayJobWithKubeRay(t *testing.T) {
	t.Parallel()
	testKindWithItsController(t, kindCase{
		kind: "RayJob", gvr: rayJobGVR,
		manifest: func(name, scheduler string) string {
			return fmt.Sprintf(`apiVersion: ray.io/v1
kind: RayJob
metadata: {name: %[1]s}
spec:
  entrypoint: python -c "print(1)"
  shutdownAfterJobFinishes: true
  submitterPodTemplate:
    spec:
      schedulerName: %[2]s
      restartPolicy: Never
      containers: [{name: ray-job-submitter, image: example.invalid/ray:1}]
  rayClusterSpec:
%[3]s`, name, scheduler, rayClusterSpec(scheduler, "    "))
		},
		// The RayCluster's pods (not the submitter's): KubeRay labels them with their node type.
		pods:          func(string) string { return "ray.io/node-type in (head,worker)" },
		suspendSwitch: []string{"spec", "suspend"},
	})
}
