package kube

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// TestFinishedWorkloadsAreTheClustersAccount: a new leader reads each finished Job of
// Arbiter's as the cluster tells it: started when its first pod started, finished at its
// completion time (else its condition's), its gang and GPUs from its spec, the nodes its pods
// ran on; a Job that failed before any pod was bound never started. Jobs still running, Jobs
// of other schedulers and Jobs another owner controls are not among them.
func TestFinishedWorkloadsAreTheClustersAccount(t *testing.T) {
	c := NewCache("arbiter")
	c.SetSettings(&Settings{
		Projects:         []scheduler.Project{{Name: "vision", Department: "research"}},
		NamespaceProject: map[string]string{"ns": "vision"},
	})
	at := func(d time.Duration) *metav1.Time { m := metav1.NewTime(t0.Add(d)); return &m }

	done := objects.Job("done", "ns").UID("uid-done").Created(t0).Pods(2).GPUs(2).Succeeded(2).Finished(false).Obj()
	done.Status.StartTime, done.Status.CompletionTime = at(time.Minute), at(time.Hour)
	c.UpsertOwner(ownerFromJob(done))
	ref := controllerRef("batch/v1", "Job", "done", "uid-done")
	for i, node := range []string{"n2", "n1"} {
		p := gpuPod("done-"+node, "uid-done-"+node, 2, &ref)
		p.Spec.NodeName = node
		p.Status.Phase = corev1.PodSucceeded
		p.Status.StartTime = at(time.Duration(2+i) * time.Minute)
		c.UpsertPod(p)
	}

	broke := objects.Job("broke", "ns").UID("uid-broke").Created(t0).Finished(true).Obj()
	broke.Status.Conditions[0].LastTransitionTime = *at(10 * time.Minute)
	c.UpsertOwner(ownerFromJob(broke))

	c.UpsertOwner(ownerFromJob(objects.Job("running", "ns").UID("uid-running").Created(t0).Obj()))
	c.UpsertOwner(ownerFromJob(objects.Job("theirs", "ns").UID("uid-theirs").Created(t0).SchedulerName("default-scheduler").Finished(false).Obj()))
	cronRef := controllerRef("batch/v1", "CronJob", "nightly", "uid-nightly")
	owned := objects.Job("owned", "ns").UID("uid-owned").Created(t0).Finished(false).Obj()
	owned.OwnerReferences = []metav1.OwnerReference{controllerRef("kubeflow.org/v1", "PyTorchJob", "big", "uid-big")}
	c.UpsertOwner(ownerFromJob(owned))
	nightly := objects.Job("nightly-1", "ns").UID("uid-nightly-1").Created(t0).Finished(false).Obj()
	nightly.OwnerReferences = []metav1.OwnerReference{cronRef}
	nightly.Status.Conditions[0].LastTransitionTime = *at(5 * time.Minute)
	c.UpsertOwner(ownerFromJob(nightly))

	job := func(name string, w FinishedWorkload) FinishedWorkload {
		w.UID, w.Namespace, w.Name, w.Kind, w.Group, w.Type = "uid-"+name, "ns", name, "Job", "batch", "Job"
		w.Project, w.Department, w.QueuedAt = "vision", "research", t0
		return w
	}
	want := []FinishedWorkload{
		job("broke", FinishedWorkload{Failed: true, Gang: 1, RequestedGPUs: 1, FinishedAt: t0.Add(10 * time.Minute)}),
		job("done", FinishedWorkload{Gang: 2, RequestedGPUs: 4, Nodes: []string{"n1", "n2"},
			StartedAt: t0.Add(2 * time.Minute), FinishedAt: t0.Add(time.Hour)}),
		job("nightly-1", FinishedWorkload{Gang: 1, RequestedGPUs: 1, FinishedAt: t0.Add(5 * time.Minute)}),
	}
	if diff := cmp.Diff(want, c.finishedWorkloads()); diff != "" {
		t.Errorf("finished workloads (-want +got):\n%s", diff)
	}
}

// TestFinishedWorkloadsIncludeJobsWhosePodsEndedFirst: the Job controller marks a Job
// complete a moment after its last pod succeeded. A new leader taking over in that moment
// counts the Job finished when none of its pods runs or waits and as many succeeded as it
// needs; one that still needs a pod, and one whose pod still runs, are not finished.
func TestFinishedWorkloadsIncludeJobsWhosePodsEndedFirst(t *testing.T) {
	c := NewCache("arbiter")
	c.SetSettings(&Settings{
		Projects:         []scheduler.Project{{Name: "vision", Department: "research"}},
		NamespaceProject: map[string]string{"ns": "vision"},
	})
	started := metav1.NewTime(t0.Add(time.Minute))
	pod := func(job, name string, phase corev1.PodPhase) {
		ref := controllerRef("batch/v1", "Job", job, "uid-"+job)
		p := gpuPod(name, "uid-"+name, 1, &ref)
		p.Spec.NodeName, p.Status.Phase, p.Status.StartTime = "n1", phase, &started
		c.UpsertPod(p)
	}
	c.UpsertOwner(ownerFromJob(objects.Job("ended", "ns").UID("uid-ended").Created(t0).Obj()))
	pod("ended", "ended-a", corev1.PodSucceeded)
	c.UpsertOwner(ownerFromJob(objects.Job("needs-more", "ns").UID("uid-needs-more").Created(t0).Pods(2).Obj()))
	pod("needs-more", "needs-more-a", corev1.PodSucceeded)
	c.UpsertOwner(ownerFromJob(objects.Job("runs", "ns").UID("uid-runs").Created(t0).Obj()))
	pod("runs", "runs-a", corev1.PodFailed)
	pod("runs", "runs-b", corev1.PodRunning)

	got := c.finishedWorkloads()
	if len(got) != 1 || got[0].Name != "ended" {
		t.Fatalf("finished workloads %v, want the Job whose only pod succeeded", got)
	}
	if got[0].FinishedAt.IsZero() || got[0].Failed {
		t.Errorf("finished at %s, failed %v; want a time, and not failed", got[0].FinishedAt, got[0].Failed)
	}
	want := FinishedWorkload{UID: "uid-ended", Namespace: "ns", Name: "ended", Kind: "Job", Group: "batch", Type: "Job",
		Project: "vision", Department: "research", Gang: 1, RequestedGPUs: 1, Nodes: []string{"n1"},
		QueuedAt: t0, StartedAt: started.Time, FinishedAt: got[0].FinishedAt}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("the ended Job's record (-want +got):\n%s", diff)
	}
}

// TestFinishedWorkloadsIncludeBarePodsArbiterBound: a pod without a controller is its own
// workload (S4), and one that succeeded or failed stays in the cluster until it is deleted: a
// takeover lists those Arbiter bound, finished when their last container ended. One that
// runs, one never bound and another scheduler's are not listed.
func TestFinishedWorkloadsIncludeBarePodsArbiterBound(t *testing.T) {
	c := NewCache("arbiter")
	c.SetSettings(&Settings{
		WorkloadTypes:    []scheduler.WorkloadType{{Name: "Pod", Category: "Train"}},
		Projects:         []scheduler.Project{{Name: "vision", Department: "research", ID: "id-vision"}},
		NamespaceProject: map[string]string{"ns": "vision"},
	})
	started := metav1.NewTime(t0.Add(time.Minute))
	pod := func(name string, phase corev1.PodPhase, node, schedulerName string, endedAt ...time.Time) {
		p := gpuPod(name, "uid-"+name, 2, nil)
		p.Spec.NodeName, p.Status.Phase = node, phase
		if schedulerName != "" {
			p.Spec.SchedulerName = schedulerName
		}
		if node != "" {
			p.Status.StartTime = &started
		}
		for _, at := range endedAt {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(at)}}})
		}
		c.UpsertPod(p)
	}
	pod("done", corev1.PodSucceeded, "n1", "", t0.Add(4*time.Minute), t0.Add(5*time.Minute))
	pod("crashed", corev1.PodFailed, "n2", "", t0.Add(3*time.Minute))
	pod("runs", corev1.PodRunning, "n1", "")
	pod("never-bound", corev1.PodFailed, "", "")
	pod("not-ours", corev1.PodSucceeded, "n1", "default-scheduler", t0.Add(2*time.Minute))

	bare := func(name string, failed bool, node string, ended time.Time) FinishedWorkload {
		return FinishedWorkload{UID: "uid-" + name, Namespace: "ns", Name: name, Kind: "Pod", Type: "Pod", Category: "Train",
			Project: "vision", Department: "research", ProjectID: "id-vision", Failed: failed, Gang: 1, RequestedGPUs: 2,
			Nodes: []string{node}, QueuedAt: t0.Add(time.Minute), StartedAt: started.Time, FinishedAt: ended}
	}
	want := []FinishedWorkload{bare("crashed", true, "n2", t0.Add(3*time.Minute)), bare("done", false, "n1", t0.Add(5*time.Minute))}
	if diff := cmp.Diff(want, c.finishedWorkloads(), sameInstant); diff != "" {
		t.Errorf("finished workloads (-want +got):\n%s", diff)
	}
}

// TestFinishedWorkloadsIncludeCustomResourcesWithAnOutcome: a PyTorchJob whose Succeeded
// condition is true is a finished workload as a Job is, its gang and GPUs the sum of its roles,
// its nodes and start its pods'; one still running, and one whose templates name another
// scheduler, are not listed.
func TestFinishedWorkloadsIncludeCustomResourcesWithAnOutcome(t *testing.T) {
	c := NewCache("arbiter")
	c.SetSettings(&Settings{
		WorkloadTypes:    []scheduler.WorkloadType{{Name: "PyTorchJob", Group: "kubeflow.org", Category: "Train"}},
		Projects:         []scheduler.Project{{Name: "nlp", Department: "research"}},
		NamespaceProject: map[string]string{"ns": "nlp"},
	})
	ended := t0.Add(10 * time.Minute)
	pytorchJob := func(name, schedulerName string, succeeded bool) {
		template := map[string]any{"spec": map[string]any{"schedulerName": schedulerName, "containers": []any{
			map[string]any{"name": "c", "resources": map[string]any{"requests": map[string]any{"nvidia.com/gpu": "2"}}}}}}
		u := ownerObj("kubeflow.org/v1", "PyTorchJob", name, "uid-"+name, nil, map[string]any{"pytorchReplicaSpecs": map[string]any{
			"Master": map[string]any{"replicas": int64(1), "template": template},
			"Worker": map[string]any{"replicas": int64(2), "template": template},
		}})
		if succeeded {
			u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Succeeded", "status": "True",
				"lastTransitionTime": ended.Format(time.RFC3339)}}}
		}
		c.UpsertOwner(ownerFrom(u))
	}
	started := metav1.NewTime(t0.Add(time.Minute))
	pod := func(owner, name, node string, phase corev1.PodPhase) {
		ref := controllerRef("kubeflow.org/v1", "PyTorchJob", owner, "uid-"+owner)
		p := gpuPod(name, "uid-"+name, 2, &ref)
		p.Spec.NodeName, p.Status.Phase, p.Status.StartTime = node, phase, &started
		c.UpsertPod(p)
	}
	pytorchJob("done", "arbiter", true)
	pod("done", "done-master-0", "n1", corev1.PodSucceeded)
	pod("done", "done-worker-0", "n1", corev1.PodSucceeded)
	pod("done", "done-worker-1", "n2", corev1.PodSucceeded)
	pytorchJob("runs", "arbiter", false)
	pod("runs", "runs-master-0", "n1", corev1.PodRunning)
	pytorchJob("not-ours", "default-scheduler", true)

	want := []FinishedWorkload{{UID: "uid-done", Namespace: "ns", Name: "done", Kind: "PyTorchJob", Group: "kubeflow.org",
		Type: "PyTorchJob", Category: "Train", Project: "nlp", Department: "research", Gang: 3, RequestedGPUs: 6,
		Nodes: []string{"n1", "n2"}, QueuedAt: t0, StartedAt: started.Time, FinishedAt: ended}}
	if diff := cmp.Diff(want, c.finishedWorkloads(), sameInstant); diff != "" {
		t.Errorf("finished workloads (-want +got):\n%s", diff)
	}
}

// sameInstant compares times as instants, whatever their location or monotonic reading (the
// cache keeps metav1 times, which carry neither as the tests' times do).
var sameInstant = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })
