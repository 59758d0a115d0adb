package kube

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
)

func gpuNode(name string, gpus int64) *corev1.Node {
	r := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Capacity: r, Allocatable: r, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

// gpuJob is a Job of parallel pods of gpus GPUs each, labelled as a submission labels it.
func gpuJob(name string, parallel int32, gpus int64, labels map[string]string) *batchv1.Job {
	return objects.Job(name, "ns").Pods(parallel).GPUs(gpus).Labels(labels).PodLabel("app", name).SchedulerName("arbiter").Obj()
}

func foreseeSettings() *Settings {
	return &Settings{
		Priorities: []scheduler.Priority{{Name: "low", Value: 40}, {Name: "high", Value: 125}},
		Categories: []scheduler.Category{{Name: "Train", DefaultPriority: "low", DefaultPreemptibility: scheduler.Preemptible}},
		WorkloadTypes: []scheduler.WorkloadType{{Name: "Job", Group: "batch", Category: "Train"},
			{Name: "Standard training", Category: "Train"}},
		NodePools:        []scheduler.NodePool{{Name: "default"}},
		Projects:         []scheduler.Project{{Name: "team", Quotas: map[string]scheduler.Quota{"default": {Deserved: 4, Limit: scheduler.NoLimit, OverQuotaWeight: 2}}}},
		NamespaceProject: map[string]string{"ns": "team"},
	}
}

// The workload a dry run foresees is the one the cache builds once the Job and its pods
// exist: same type (S4, from the type label), project (S6, from the namespace), gang (S5),
// labels (S7, S8 read them) and pod requests.
func TestDryRun_SeesTheWorkloadTheCycleWillSee(t *testing.T) {
	settings := foreseeSettings()
	job := gpuJob("train", 2, 1, map[string]string{LabelWorkloadType: "standard-training", LabelPriority: "high"})
	deadline := int64(3600)
	job.Spec.ActiveDeadlineSeconds = &deadline

	c := NewCache("arbiter")
	c.SetSettings(settings)
	o, err := proposedOwner(job, t0)
	if err != nil {
		t.Fatal(err)
	}
	proposed := c.proposedWorkload(o, t0)

	created := job.DeepCopy()
	created.UID, created.CreationTimestamp = "j1", metav1.NewTime(t0)
	c.UpsertOwner(ownerFromJob(created))
	ref := controllerRef("batch/v1", "Job", "train", "j1")
	for i, name := range []string{"train-0", "train-1"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("p" + name),
			Labels: created.Spec.Template.Labels, OwnerReferences: []metav1.OwnerReference{ref}, CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(i) * time.Second))},
			Spec: created.Spec.Template.Spec}
		c.UpsertPod(p)
	}
	view := cycleView(c, t0.Add(time.Minute), settings)
	built, _ := view.Workload("j1")
	if built == nil {
		t.Fatal("the created Job's workload is not in the view")
	}
	type seen struct {
		Kind, Group, Type, Project, Namespace, Name string
		Labels                                      map[string]string
		Gang                                        scheduler.GangSpec
		Phase                                       scheduler.Phase
		Deadline                                    time.Time
		Requests                                    []scheduler.Resources
	}
	of := func(w *scheduler.Workload) seen {
		s := seen{w.Kind, w.Group, w.Type, w.Project, w.Namespace, w.Name, w.Labels, w.Gang, w.Phase, w.Deadline, nil}
		for _, p := range w.Pods {
			s.Requests = append(s.Requests, p.Requests)
		}
		return s
	}
	if d := cmp.Diff(of(built), of(&proposed)); d != "" {
		t.Errorf("dry-run workload differs from the built one (-built +proposed):\n%s", d)
	}
	if proposed.Type != "Standard training" || proposed.Project != "team" || !proposed.Deadline.Equal(t0.Add(time.Hour)) {
		t.Errorf("type %q project %q deadline %v, want Standard training in team, an hour after creation", proposed.Type, proposed.Project, proposed.Deadline)
	}
}

// DryRun foresees on the cache as of now: a high-priority Job preempts the low-priority one
// that holds the node (S16) and names it; nothing is created in the cache.
func TestDryRun_NamesItsVictim(t *testing.T) {
	s := &Scheduler{cache: NewCache("arbiter")}
	if _, err := s.DryRun(context.Background(), gpuJob("w", 1, 4, nil), scheduler.EstimateInput{}); err != ErrNotReady {
		t.Fatalf("before any configuration: err %v, want ErrNotReady", err)
	}
	s.settings.Store(foreseeSettings())
	s.cache.UpsertNode(gpuNode("n1", 4))
	runningJob := gpuJob("old", 1, 4, nil)
	runningJob.UID, runningJob.CreationTimestamp = "j-old", metav1.NewTime(t0)
	hour, jobStart := int64(3600), time.Now().Truncate(time.Second)
	runningJob.Spec.ActiveDeadlineSeconds, runningJob.Status.StartTime = &hour, &metav1.Time{Time: jobStart}
	s.cache.UpsertOwner(ownerFromJob(runningJob))
	ref := controllerRef("batch/v1", "Job", "old", "j-old")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "old-0", Namespace: "ns", UID: "p-old", OwnerReferences: []metav1.OwnerReference{ref},
		CreationTimestamp: metav1.NewTime(t0)}, Spec: runningJob.Spec.Template.Spec}
	pod.Spec.NodeName = "n1"
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &metav1.Time{Time: t0}
	s.cache.UpsertPod(pod)

	got, err := s.DryRun(context.Background(), gpuJob("urgent", 1, 4, map[string]string{LabelPriority: "high"}), scheduler.EstimateInput{})
	if err != nil {
		t.Fatal(err)
	}
	want := []scheduler.Victim{{WorkloadID: "j-old", Namespace: "ns", Name: "old", Project: "team",
		Priority: scheduler.Priority{Name: "low", Value: 40}, Rule: scheduler.RulePreemption, GPUs: 4}}
	if got.Outcome != scheduler.StartAfterPreemption || got.NodePool != "default" || !cmp.Equal(got.Nodes, []string{"n1"}) {
		t.Errorf("prediction %+v, want start-after-preemption on n1 in pool default", got)
	}
	if d := cmp.Diff(want, got.Victims); d != "" {
		t.Errorf("victims (-want +got):\n%s", d)
	}
	if got.Start.At.IsZero() || got.Start.Basis == "" {
		t.Errorf("a start after preemption is now, with its basis: %+v", got.Start)
	}
	// Of the same priority it waits, and starts when the running Job's deadline frees the node.
	waits, err := s.DryRun(context.Background(), gpuJob("patient", 1, 4, nil), scheduler.EstimateInput{})
	if err != nil {
		t.Fatal(err)
	}
	if waits.Outcome != scheduler.Wait || !waits.Start.At.Equal(jobStart.Add(time.Hour)) {
		t.Errorf("prediction %+v, want wait until the running Job's deadline %v", waits, jobStart.Add(time.Hour))
	}
	if w, _ := s.cache.Snapshot(t0).Workload(dryRunUID); w != nil {
		t.Errorf("the dry run left its workload in the cache")
	}
	if _, err := s.DryRun(context.Background(), runningJob, scheduler.EstimateInput{}); err == nil {
		t.Errorf("a dry run of an existing workload should be refused")
	}
}

// A Job's deadline counts from its status.startTime (the Job controller's start), else its
// creation; a suspended Job's clock is stopped, so it has none.
func TestJobDeadline(t *testing.T) {
	ads := int64(600)
	job := gpuJob("j", 1, 1, nil)
	job.CreationTimestamp = metav1.NewTime(t0)
	job.Spec.ActiveDeadlineSeconds = &ads
	if got := ownerFromJob(job).Deadline; !got.Equal(t0.Add(10 * time.Minute)) {
		t.Errorf("from creation: %v", got)
	}
	job.Status.StartTime = &metav1.Time{Time: t0.Add(time.Minute)}
	if got := ownerFromJob(job).Deadline; !got.Equal(t0.Add(11 * time.Minute)) {
		t.Errorf("from status.startTime: %v", got)
	}
	yes := true
	job.Spec.Suspend = &yes
	if got := ownerFromJob(job).Deadline; !got.IsZero() {
		t.Errorf("suspended: %v, want none", got)
	}
}
