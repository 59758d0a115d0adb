package e2e

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/store"
)

// TestFailover_NewLeaderRecordsWhatTheOldOneDidNot: a leader binds two Jobs and dies before it
// writes their records (its --record-interval holds them back after a first write) and before their Scheduled
// events reach the API server (deleted here, as if it died between the bind and the event);
// one Job, and a bare pod, finish before the standby takes over. The new leader records all
// three from the cluster: the finished ones as Completed with the cluster's start and end
// times, the running one as Running, and each bound pod gets one Scheduled event at the time
// it was bound.
func TestFailover_NewLeaderRecordsWhatTheOldOneDidNot(t *testing.T) {
	t.Parallel()
	e, ns, a := leaderHoldingRecords(t, "unrecorded", 6)

	short := e.job(jobSpec{name: "short", namespace: ns, runSeconds: "2"})
	long := e.job(jobSpec{name: "long", namespace: ns})
	solo := gpuPod(e, "solo", ns, nil, func(p *corev1.Pod) {
		p.Annotations = map[string]string{devcluster.AnnotationRunSeconds: "2"}
	})
	e.eventually("replica a binds both Jobs and the bare pod and says so", time.Minute, func() bool {
		by, _ := e.scheduledBy(ns)
		return len(by["a"]) == 3
	})
	a.signal(t, syscall.SIGKILL)
	<-a.exit
	for _, ev := range e.scheduledEvents(ns) {
		if err := e.client.CoreV1().Events(ns).Delete(e.ctx, ev.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var done *batchv1.Job
	e.eventually("the short Job completes", time.Minute, func() bool {
		j, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, "short", metav1.GetOptions{})
		done = j
		return err == nil && j.Status.CompletionTime != nil
	})
	e.eventually("the bare pod succeeds", time.Minute, func() bool {
		p, err := e.client.CoreV1().Pods(ns).Get(e.ctx, "solo", metav1.GetOptions{})
		solo = p
		return err == nil && p.Status.Phase == corev1.PodSucceeded
	})
	for _, uid := range []string{string(short.UID), string(long.UID), string(solo.UID)} {
		if _, err := e.store.WorkloadRecord(e.ctx, uid); err == nil {
			t.Fatalf("replica a wrote the record of %s before it died: the test would check nothing", uid)
		}
	}

	b := e.startReplica("b")
	e.eventually("replica b leads", time.Minute, func() bool { return e.leaseHolder() == "b" })

	shortPod, longPod := e.jobPods(ns, "short")[0], e.jobPods(ns, "long")[0]
	e.eventually("the new leader records the running Job", time.Minute, func() bool {
		l, err := e.store.WorkloadRecord(e.ctx, string(long.UID))
		return err == nil && l.Phase == "Running"
	})
	rec := e.finishedRecord("the Job that finished before the new leader took over", string(short.UID), 30*time.Second)
	project, err := e.store.ProjectNamed(e.ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	got := recordedOf(rec)
	want := recorded{"Completed", ns, &project.ID, 1, 0, done.CreationTimestamp.Time, &shortPod.Status.StartTime.Time, &done.Status.CompletionTime.Time}
	if diff := cmp.Diff(want, got, timesEqual); diff != "" {
		t.Errorf("the finished Job's record (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Queued", "Admitted", "Completed"}, e.history(string(short.UID))); diff != "" {
		t.Errorf("the finished Job's history (-want +got):\n%s", diff)
	}
	soloRec := e.finishedRecord("the bare pod that finished before the new leader took over", string(solo.UID), 30*time.Second)
	soloEnded := solo.Status.ContainerStatuses[0].State.Terminated.FinishedAt.Time
	got = recordedOf(soloRec)
	want = recorded{"Completed", ns, &project.ID, 1, 0, solo.CreationTimestamp.Time, &solo.Status.StartTime.Time, &soloEnded}
	if diff := cmp.Diff(want, got, timesEqual); diff != "" {
		t.Errorf("the finished bare pod's record (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Queued", "Admitted"}, e.history(string(long.UID))); diff != "" {
		t.Errorf("the running Job's history (-want +got):\n%s", diff)
	}

	e.eventually("every bound pod has its Scheduled event again", 30*time.Second, func() bool {
		return len(e.scheduledEvents(ns)) >= 3
	})
	type scheduled struct {
		Pod, By string
		At      time.Time
	}
	var evs []scheduled
	for _, ev := range e.scheduledEvents(ns) {
		evs = append(evs, scheduled{ev.InvolvedObject.Name, ev.ReportingInstance, ev.FirstTimestamp.Time})
	}
	wantEvs := []scheduled{{longPod.Name, "b", boundAt(longPod)}, {shortPod.Name, "b", boundAt(shortPod)}, {solo.Name, "b", boundAt(*solo)}}
	slices.SortFunc(wantEvs, func(a, b scheduled) int { return strings.Compare(a.Pod, b.Pod) })
	if diff := cmp.Diff(wantEvs, evs, timesEqual); diff != "" {
		t.Errorf("Scheduled events after the takeover (-want +got):\n%s", diff)
	}
	if hasLine(b.logText(), "bind failed") {
		t.Errorf("replica b bound a pod replica a had bound")
	}
}

// leaderHoldingRecords starts an environment whose only Arbiter is replica a, leading with
// --record-interval=1h and past its first write (holdBackRecords), and a project of gpus GPUs
// in its namespace ns: what a binds after this waits an hour for its record.
func leaderHoldingRecords(t *testing.T, project string, gpus int) (*env, string, *replica) {
	t.Helper()
	e := newEnv(t, 1, 8)
	e.a.stop() // newEnv's in-process Arbiter; the replicas below replace it
	ns := e.project(project, gpus, store.PolicyUpdate{})
	a := e.startReplica("a", "--record-interval=1h")
	e.eventually("replica a leads", time.Minute, func() bool { return e.leaseHolder() == "a" })
	e.holdBackRecords()
	return e, ns, a
}

// recorded is what the failover tests compare of a workload record.
type recorded struct {
	Phase, Project       string
	ProjectID            *uuid.UUID // a workload belongs to its project by id
	Requested, Allocated int
	Queued               time.Time
	Started, Finished    *time.Time
}

func recordedOf(r store.WorkloadRecord) recorded {
	return recorded{r.Phase, r.ProjectName, r.ProjectID, r.RequestedGPUs, r.AllocatedGPUs, r.QueuedAt, r.StartedAt, r.FinishedAt}
}

// finishedRecord waits up to within for the record of workload uid (what) to say it finished,
// and answers it.
func (e *env) finishedRecord(what, uid string, within time.Duration) store.WorkloadRecord {
	e.t.Helper()
	var rec store.WorkloadRecord
	e.eventually("the leader records "+what, within, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, uid)
		rec = r
		return err == nil && r.FinishedAt != nil
	})
	return rec
}

// holdBackRecords makes the leading replica, started with --record-interval=1h, write once:
// a Job of a project of its own is recorded, and what changes after that write waits an hour
// for the next.
func (e *env) holdBackRecords() {
	e.t.Helper()
	ns := e.project("first-write", 2, store.PolicyUpdate{})
	first := e.job(jobSpec{name: "first", namespace: ns})
	e.eventually("the leader writes its first record", time.Minute, func() bool {
		_, err := e.store.WorkloadRecord(e.ctx, string(first.UID))
		return err == nil
	})
}

// timesEqual compares times by instant, not by location or monotonic reading.
var timesEqual = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

// scheduledEvents are the namespace's Scheduled events, sorted by pod name.
func (e *env) scheduledEvents(ns string) []corev1.Event {
	e.t.Helper()
	list, err := e.client.CoreV1().Events(ns).List(e.ctx, metav1.ListOptions{FieldSelector: "reason=Scheduled"})
	if err != nil {
		e.t.Fatal(err)
	}
	evs := list.Items
	slices.SortFunc(evs, func(a, b corev1.Event) int { return strings.Compare(a.InvolvedObject.Name, b.InvolvedObject.Name) })
	return evs
}

// boundAt is when the API server bound a pod: its PodScheduled condition's transition to true.
func boundAt(p corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// TestFailover_GracefulStopWritesPendingRecords: a leader stopped gracefully (SIGTERM, a rolling
// update) writes the records it still holds before it releases the lease, so its successor
// has nothing to reconcile; here the recorder would otherwise hold them for an hour.
func TestFailover_GracefulStopWritesPendingRecords(t *testing.T) {
	t.Parallel()
	e, ns, a := leaderHoldingRecords(t, "graceful", 6)
	job := e.job(jobSpec{name: "train", namespace: ns})
	e.eventually("replica a binds the Job", time.Minute, func() bool {
		by, _ := e.scheduledBy(ns)
		return len(by["a"]) == 1
	})
	if _, err := e.store.WorkloadRecord(e.ctx, string(job.UID)); err == nil {
		t.Fatal("replica a wrote the record before it was stopped: the test would check nothing")
	}
	a.signal(t, syscall.SIGTERM)
	<-a.exit
	rec, err := e.store.WorkloadRecord(e.ctx, string(job.UID))
	if err != nil {
		t.Fatalf("the Job's record after a graceful stop: %v", err)
	}
	if rec.Phase != "Running" {
		t.Errorf("the Job is recorded %s, want Running", rec.Phase)
	}
	if h := e.leaseHolder(); h != "" {
		t.Errorf("the lease is held by %q after a graceful stop, want released", h)
	}
}
