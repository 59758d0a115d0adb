package kube

import (
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// This file reads the custom resources Arbiter knows: their gang fields (S5), their suspend
// switch (S20) and the pods each of their roles makes, so that a workload Arbiter suspended,
// which has no pods, can be admitted again. The field names are the controllers' own
// (training-operator v1.9, mpi-operator v2beta1, JobSet v1alpha2, Trainer v1alpha1, KubeRay v1,
// LeaderWorkerSet v1). docs/scheduling.md has the rules in words.

// podRole is one template of a workload's owner and how many pods it makes from it.
type podRole struct {
	Name     string
	Template *corev1.PodTemplateSpec
	Count    int32
}

// podRoles are the pods a suspended owner will make when resumed: its roles, or its one
// template.
func (o *owner) podRoles() []podRole {
	if len(o.Roles) > 0 {
		return o.Roles
	}
	if o.Template != nil {
		return []podRole{{Template: o.Template, Count: max(o.TemplateCount, 1)}}
	}
	return nil
}

// ownerFrom extracts an owner from an object served by a dynamic informer (custom resources).
func ownerFrom(u *unstructured.Unstructured) *owner {
	o := ownerOf(u, u.GetAPIVersion(), u.GetKind())
	obj := u.Object
	switch {
	case o.Kind == "Job" && o.Group == "batch":
		var j batchv1.Job
		if err := runtimeConverter.FromUnstructured(obj, &j); err == nil {
			return ownerFromJob(&j)
		}
	case o.Group == "kubeflow.org" && strings.HasSuffix(o.Kind, "Job"):
		readKubeflow(o, obj)
	case o.Group == "ray.io" && o.Kind == "RayCluster":
		o.Suspended, _, _ = unstructured.NestedBool(obj, "spec", "suspend")
		readRayCluster(o, obj, "spec")
	case o.Group == "ray.io" && o.Kind == "RayJob":
		o.Suspended, _, _ = unstructured.NestedBool(obj, "spec", "suspend")
		readRayCluster(o, obj, "spec", "rayClusterSpec")
	case o.Group == "jobset.x-k8s.io" && o.Kind == "JobSet":
		o.Suspended, _, _ = unstructured.NestedBool(obj, "spec", "suspend")
		readJobSet(o, obj)
	case o.Group == "trainer.kubeflow.org" && o.Kind == "TrainJob":
		o.Suspended, _, _ = unstructured.NestedBool(obj, "spec", "suspend")
		// Until the JobSet the Trainer makes from its runtime is known, the gang is the
		// trainer's nodes (see trainJobGang).
		if n, ok, _ := unstructured.NestedInt64(obj, "spec", "trainer", "numNodes"); ok && n > 0 {
			o.Gang.Replicas = []int32{int32(n)}
		}
	case o.Group == "leaderworkerset.x-k8s.io" && o.Kind == "LeaderWorkerSet":
		readLeaderWorkerSet(o, obj)
	}
	readOutcome(o, obj)
	return o
}

// readKubeflow: a Kubeflow job's gang is every role's replicas (master and workers, launcher
// and workers, chief, ps and workers); its switch is spec.runPolicy.suspend.
func readKubeflow(o *owner, obj map[string]any) {
	spec, _, _ := unstructured.NestedMap(obj, "spec")
	for _, key := range sortedKeys(spec) {
		if !strings.HasSuffix(key, "ReplicaSpecs") {
			continue
		}
		roles, _ := spec[key].(map[string]any)
		for _, role := range sortedKeys(roles) {
			r, _ := roles[role].(map[string]any)
			n, ok, _ := unstructured.NestedInt64(r, "replicas")
			if !ok {
				n = 1
			}
			o.Gang.Replicas = append(o.Gang.Replicas, int32(n))
			o.addRole(role, r, n, "template")
		}
	}
	o.Suspended, _, _ = unstructured.NestedBool(obj, "spec", "runPolicy", "suspend")
}

// readRayCluster: a Ray cluster's gang is its head and each worker group's minReplicas, times
// the group's numOfHosts (a multi-host group makes that many pods per replica); a worker group
// suspended on its own makes none. A suspended cluster comes back with each group's replicas
// (kept within its minimum and maximum).
func readRayCluster(o *owner, obj map[string]any, path ...string) {
	o.Gang.Replicas = []int32{1}
	if head, ok, _ := unstructured.NestedMap(obj, append(path, "headGroupSpec")...); ok {
		o.addRole("head", head, 1, "template")
	}
	groups, _, _ := unstructured.NestedSlice(obj, append(path, "workerGroupSpecs")...)
	for i, g := range groups {
		m, _ := g.(map[string]any)
		if off, _, _ := unstructured.NestedBool(m, "suspend"); off {
			continue // a suspended worker group makes no pods
		}
		hosts, ok, _ := unstructured.NestedInt64(m, "numOfHosts")
		if !ok || hosts < 1 {
			hosts = 1
		}
		minimum, _, _ := unstructured.NestedInt64(m, "minReplicas")
		o.Gang.Replicas = append(o.Gang.Replicas, int32(minimum*hosts))
		replicas, ok, _ := unstructured.NestedInt64(m, "replicas")
		if !ok {
			replicas = minimum
		}
		if maximum, ok, _ := unstructured.NestedInt64(m, "maxReplicas"); ok {
			replicas = min(replicas, maximum)
		}
		name, _, _ := unstructured.NestedString(m, "groupName")
		if name == "" {
			name = "worker-" + strconv.Itoa(i)
		}
		o.addRole(name, m, max(replicas, minimum)*hosts, "template")
	}
}

// readJobSet: a JobSet makes replicas Jobs of each replicated job, each running
// min(parallelism, completions) pods at once. Its gang is the first stage: every replicated
// job when they all start together (startupPolicy AnyOrder, the default), else those that
// start first — the first one under InOrder (each waits for the one before it to be ready),
// those with no dependsOn under dependsOn. Later stages wait for the first, so a gang of all
// of them would never be placed; they are placed as their pods appear. A suspended JobSet
// comes back with its first stage, for the same reason.
func readJobSet(o *owner, obj map[string]any) {
	jobs, _, _ := unstructured.NestedSlice(obj, "spec", "replicatedJobs")
	order, _, _ := unstructured.NestedString(obj, "spec", "startupPolicy", "startupPolicyOrder")
	for i, rj := range jobs {
		m, _ := rj.(map[string]any)
		deps, _, _ := unstructured.NestedSlice(m, "dependsOn")
		if order == "InOrder" && i > 0 || len(deps) > 0 {
			continue
		}
		replicas, ok, _ := unstructured.NestedInt64(m, "replicas")
		if !ok {
			replicas = 1
		}
		pods, ok, _ := unstructured.NestedInt64(m, "template", "spec", "parallelism")
		if !ok {
			pods = 1
		}
		if completions, ok, _ := unstructured.NestedInt64(m, "template", "spec", "completions"); ok {
			pods = min(pods, completions)
		}
		o.Gang.Replicas = append(o.Gang.Replicas, int32(replicas*pods))
		name, _, _ := unstructured.NestedString(m, "name")
		o.addRole(name, m, replicas*pods, "template", "spec", "template")
	}
}

// readLeaderWorkerSet: each of a LeaderWorkerSet's replicas is a group of size pods, the
// leader counted, and each group is a gang of its own. Under startupPolicy LeaderReady the
// workers are made only once the leader is ready, so the gang is the leader alone and the
// workers are placed as they appear.
func readLeaderWorkerSet(o *owner, obj map[string]any) {
	n, ok, _ := unstructured.NestedInt64(obj, "spec", "leaderWorkerTemplate", "size")
	if !ok {
		n = 1
	}
	if policy, _, _ := unstructured.NestedString(obj, "spec", "startupPolicy"); policy == "LeaderReady" {
		n = 1
	}
	o.Gang.GroupSize = int32(n)
}

// addRole adds the pods of one template found at path in m, when it decodes.
func (o *owner) addRole(name string, m map[string]any, count int64, path ...string) {
	raw, ok, _ := unstructured.NestedMap(m, path...)
	if !ok {
		return
	}
	var t corev1.PodTemplateSpec
	if err := runtimeConverter.FromUnstructured(raw, &t); err != nil {
		return
	}
	o.Roles = append(o.Roles, podRole{Name: name, Template: &t, Count: int32(count)})
}

// outcomeConditions are, by kind, the status conditions its controller sets True when it has
// completed and when it has failed: a finished owner ends its workload (S24) as a Job's
// Complete or Failed does, instead of standing as a live owner without pods.
var outcomeConditions = map[string]struct{ done, failed string }{
	"jobset.x-k8s.io/JobSet":        {"Completed", "Failed"},
	"trainer.kubeflow.org/TrainJob": {"Complete", "Failed"},
	"kubeflow.org/PyTorchJob":       {"Succeeded", "Failed"},
	"kubeflow.org/TFJob":            {"Succeeded", "Failed"},
	"kubeflow.org/JAXJob":           {"Succeeded", "Failed"},
	"kubeflow.org/XGBoostJob":       {"Succeeded", "Failed"},
	"kubeflow.org/MPIJob":           {"Succeeded", "Failed"},
}

// readOutcome sets Finished, Failed and Ended from a custom resource's status: its kind's
// outcome conditions, or a RayJob's jobDeploymentStatus (Complete or Failed, at its endTime).
func readOutcome(o *owner, obj map[string]any) {
	if o.Group == "ray.io" && o.Kind == "RayJob" {
		switch status, _, _ := unstructured.NestedString(obj, "status", "jobDeploymentStatus"); status {
		case "Complete", "Failed":
			o.Finished, o.Failed = true, status == "Failed"
			o.Ended = timeAt(obj, "status", "endTime")
		}
		return
	}
	kind, ok := outcomeConditions[o.Group+"/"+o.Kind]
	if !ok {
		return
	}
	conditions, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["status"] != "True" || (m["type"] != kind.done && m["type"] != kind.failed) {
			continue
		}
		o.Finished, o.Failed = true, m["type"] == kind.failed
		o.Ended = timeAt(m, "lastTransitionTime")
	}
}

// timeAt is the RFC 3339 time at path in obj; zero when absent or not a time.
func timeAt(obj map[string]any, path ...string) time.Time {
	s, _, _ := unstructured.NestedString(obj, path...)
	t, _ := time.Parse(time.RFC3339, s)
	return t
}
