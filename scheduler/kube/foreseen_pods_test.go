package kube

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// A Job's controller makes its pods after the Job, a few at a time. In the demo's second
// second a low-priority Job was admitted onto the room a medium-priority gang of its project
// needed, because the gang's pods were not all made yet, and was preempted for it 65 ms
// later (S16). While a Job is new, the pods its controller has yet to make are foreseen from
// its template: where the gang would fit, what it needs is kept from the work it would evict,
// nothing of it is bound until its pods exist, and it evicts no one for pods that may never
// come (S19). After scheduler.ForeseenPodsFor nothing is kept.

// jobCreatedAt is a Job as the cache reads it, created at the given time.
func jobCreatedAt(name string, parallel int32, gpus int64, labels map[string]string, created time.Time) *owner {
	j := gpuJob(name, parallel, gpus, labels)
	j.UID, j.CreationTimestamp = types.UID("j-"+name), metav1.NewTime(created)
	return ownerFromJob(j)
}

// jobPod is the i-th pod a Job's controller made from its template.
func jobPod(o *owner, i int, created time.Time) *corev1.Pod {
	ref := controllerRef("batch/v1", "Job", o.Name, string(o.UID))
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-" + strconv.Itoa(i), Namespace: "ns",
		UID: types.UID(string(o.UID) + "-p" + strconv.Itoa(i)), Labels: o.Template.Labels,
		OwnerReferences: []metav1.OwnerReference{ref}, CreationTimestamp: metav1.NewTime(created)},
		Spec: o.Template.Spec}
}

func boundWorkloads(p scheduler.Plan) []string {
	var out []string
	for _, b := range p.Binds {
		if !slices.Contains(out, b.Workload) {
			out = append(out, b.Workload)
		}
	}
	slices.Sort(out)
	return out
}

// gangBesideLowJob is a cache of two 4-GPU nodes with a new high-priority gang Job of two
// 4-GPU pods, made of them pods made, and a new low-priority Job of lowPods 4-GPU pods, all
// made, both created at now.
func gangBesideLowJob(now time.Time, lowPods int32, made int) (*Cache, *owner) {
	c := NewCache("arbiter")
	c.UpsertNode(gpuNode("n1", 4))
	c.UpsertNode(gpuNode("n2", 4))
	gang := jobCreatedAt("pretrain", 2, 4, map[string]string{LabelPriority: "high"}, now)
	low := jobCreatedAt("finetune", lowPods, 4, nil, now)
	c.UpsertOwner(gang)
	c.UpsertOwner(low)
	for i := range made {
		c.UpsertPod(jobPod(gang, i, now))
	}
	for i := range int(lowPods) {
		c.UpsertPod(jobPod(low, i, now))
	}
	return c, gang
}

func TestS19_AJobsPodsNotYetMadeKeepItsRoomFromLowerPriorityWork(t *testing.T) {
	for _, made := range []int{0, 1} {
		t.Run(strconv.Itoa(made)+" of 2 pods made", func(t *testing.T) {
			now := time.Now()
			c, gang := gangBesideLowJob(now, 1, made)

			plan := cycleView(c, now.Add(100*time.Millisecond), foreseeSettings()).Snapshot.Plan()
			if got := boundWorkloads(plan); len(got) > 0 {
				t.Errorf("bound %v; want nothing: the gang's room is kept from lower-priority work of its project while its controller makes its pods", got)
			}
			if len(plan.Evictions) > 0 {
				t.Errorf("evictions %+v for pods not made yet", plan.Evictions)
			}
			reasons := map[string]scheduler.Reason{}
			for _, p := range plan.Pending {
				reasons[p.Name] = p.Reason
			}
			if reasons["pretrain"] != scheduler.GangIncomplete || reasons["finetune"] != scheduler.InsufficientCapacity {
				t.Errorf("reasons %v; want pretrain GangIncomplete (its room kept), finetune InsufficientCapacity", reasons)
			}

			// Its pods made, the gang is bound where its room was kept.
			for i := made; i < 2; i++ {
				c.UpsertPod(jobPod(gang, i, now.Add(time.Second)))
			}
			plan = cycleView(c, now.Add(time.Second), foreseeSettings()).Snapshot.Plan()
			if got := boundWorkloads(plan); !slices.Equal(got, []string{"j-pretrain"}) {
				t.Errorf("once its pods exist: bound %v, want the gang", got)
			}
		})
	}
}

// Pods that do not come within scheduler.ForeseenPodsFor of the Job's creation (a quota that
// forbids them, a controller that is down) no longer keep its room: the low-priority Job starts.
func TestS19_PodsThatDoNotComeStopKeepingTheRoom(t *testing.T) {
	now := time.Now()
	c, _ := gangBesideLowJob(now, 2, 0)
	later := now.Add(scheduler.ForeseenPodsFor + time.Second)
	plan := cycleView(c, later, foreseeSettings()).Snapshot.Plan()
	if got := boundWorkloads(plan); !slices.Equal(got, []string{"j-finetune"}) {
		t.Errorf("bound %v, want the low-priority Job: the other's pods never came", got)
	}
	// An old Job without its pods is not a workload the cache builds at all, nor is a new
	// one-pod Job: its pod comes in its controller's first step.
	old := NewCache("arbiter")
	old.UpsertOwner(jobCreatedAt("pretrain", 2, 4, nil, now.Add(-2*scheduler.ForeseenPodsFor)))
	old.UpsertOwner(jobCreatedAt("single", 1, 4, nil, now))
	view := cycleView(old, now, foreseeSettings())
	for _, uid := range []string{"j-pretrain", "j-single"} {
		if w, _ := view.Workload(uid); w != nil {
			t.Errorf("%s, without pods, is built as %+v", uid, w)
		}
	}
}

// While its room is kept for its pods, the cluster is not told why it waits: no event on the
// Job and no condition on the pod it has (seconds of the controller's work, for every new
// Job). A reason it waits for besides its pods is told as before.
func TestS23_AJobAwaitingItsPodsIsNotAnEvent(t *testing.T) {
	now := time.Now()
	c := NewCache("arbiter")
	s := &Scheduler{opts: Options{SchedulerName: "arbiter", Observer: noObserver{}}, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		client: fake.NewClientset(), cache: c, lastReason: map[string]string{}, warned: map[string]bool{},
		workers: 1, tasks: make(chan func(context.Context), 1024), now: func() time.Time { return now }}
	s.settings.Store(foreseeSettings())
	c.UpsertNode(gpuNode("n1", 8))
	gang := jobCreatedAt("pretrain", 2, 4, nil, now)
	c.UpsertOwner(gang)
	c.UpsertPod(jobPod(gang, 0, now))
	s.cycle(context.Background())
	if got := s.Last().Plan.Pending; len(got) != 1 || !got[0].AwaitingPods {
		t.Fatalf("pending %+v, want the Job awaiting its pods", got)
	}
	if len(s.lastReason) != 0 || len(s.tasks) != 0 {
		t.Errorf("reasons told %v, pod writes queued %d; want none while it awaits its pods", s.lastReason, len(s.tasks))
	}

	// Too big for the node: it waits for capacity, and says so.
	big := jobCreatedAt("big", 3, 4, nil, now)
	c.UpsertOwner(big)
	c.UpsertPod(jobPod(big, 0, now))
	s.cycle(context.Background())
	if _, told := s.lastReason["j-big"]; !told || len(s.tasks) != 1 {
		t.Errorf("reasons told %v, pod writes queued %d; want the big Job's reason told, on its pod", s.lastReason, len(s.tasks))
	}
}

// A JobSet makes its Jobs first and their controller makes the pods: while it is new, the
// pods still to come are foreseen per replicated job, from that job's template, less the ones
// made so far; once all are made none is foreseen. A JobSet a TrainJob owns is the TrainJob's
// workload and is not foreseen on its own.
func TestS19_ANewJobSetsPodsAreForeseenPerReplicatedJob(t *testing.T) {
	now := time.Now()
	u := readKind(t, "jobset.yaml") // a driver of 1 pod and 3 worker Jobs of 4 pods each
	if err := unstructured.SetNestedField(u.Object, false, "spec", "suspend"); err != nil {
		t.Fatal(err)
	}
	u.SetCreationTimestamp(metav1.NewTime(now))
	js := ownerFrom(u)
	c := NewCache("arbiter")
	c.UpsertNode(gpuNode("n1", 16))
	c.UpsertOwner(js)
	child := objects.Job("paralleljobs-workers-0", "ns").UID("workers-0-uid").Created(now).Obj()
	child.OwnerReferences = []metav1.OwnerReference{controllerRef("jobset.x-k8s.io/v1alpha2", "JobSet", js.Name, string(js.UID))}
	workerJob := ownerFromJob(child)
	c.UpsertOwner(workerJob)
	ref := controllerRef("batch/v1", "Job", workerJob.Name, string(workerJob.UID))

	type count struct{ Made, Foreseen map[string]int }
	counted := func() (count, time.Time) {
		w, _ := cycleView(c, now.Add(time.Second), foreseeSettings()).Workload(string(js.UID))
		if w == nil {
			t.Fatal("the new JobSet is not a workload")
		}
		got := count{map[string]int{}, map[string]int{}}
		for _, p := range w.Pods {
			if p.Foreseen {
				got.Foreseen[p.PodSet]++
			} else {
				got.Made[p.PodSet]++
			}
		}
		return got, w.PodsDue
	}
	steps := []struct {
		name string
		made int // worker pods made before this step
		want count
	}{
		{"no pod made", 0, count{map[string]int{}, map[string]int{"driver": 1, "workers": 12}}},
		{"one worker pod made", 1, count{map[string]int{"workers": 1}, map[string]int{"driver": 1, "workers": 11}}},
		{"every worker pod made", 12, count{map[string]int{"workers": 12}, map[string]int{"driver": 1}}},
	}
	for _, s := range steps {
		for i := range s.made {
			p := gpuPod("paralleljobs-workers-"+strconv.Itoa(i), "w-"+strconv.Itoa(i), 1, &ref)
			p.Labels = map[string]string{"jobset.sigs.k8s.io/replicatedjob-name": "workers"}
			c.UpsertPod(p)
		}
		got, due := counted()
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s: pods per replicated job (-want +got):\n%s", s.name, diff)
		}
		if due.IsZero() {
			t.Errorf("%s: no PodsDue while pods are foreseen", s.name)
		}
	}
	driver := gpuPod("paralleljobs-driver-0", "d-0", 0, &ref)
	driver.Labels = map[string]string{"jobset.sigs.k8s.io/replicatedjob-name": "driver"}
	c.UpsertPod(driver)
	if got, due := counted(); len(got.Foreseen) > 0 || !due.IsZero() {
		t.Errorf("all 13 pods made: foreseen %v, PodsDue %v; want none", got.Foreseen, due)
	}

	owned := readKind(t, "jobset.yaml")
	_ = unstructured.SetNestedField(owned.Object, false, "spec", "suspend")
	owned.SetUID("owned-uid")
	owned.SetCreationTimestamp(metav1.NewTime(now))
	owned.SetOwnerReferences([]metav1.OwnerReference{controllerRef("trainer.kubeflow.org/v1alpha1", "TrainJob", "train", "train-uid")})
	if o := ownerFrom(owned); c.foreseesPodsOf(o) {
		t.Error("a TrainJob's JobSet is foreseen on its own")
	}
}
