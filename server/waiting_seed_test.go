package server

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
)

// TestS19_ANewLeaderKnowsHowLongWorkHasWaited: the records say vision waits since ten minutes
// ago and retry since it was preempted three minutes ago. A new leader, whose cache sees them
// for the first time, keeps those times through its first cycle, so S19 still spares the work
// that started while they waited. Only workloads that wait now are seeded: one the records
// call waiting but that runs keeps its start, one without a record waits from the first cycle,
// and a time recorded ahead of the clock is not taken as later than now. The same whether the
// records of every waiting workload were read beside the lists, or there were more than that
// read holds and the ones the cache finds waiting are read again.
func TestS19_ANewLeaderKnowsHowLongWorkHasWaited(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		rows int
	}{{"every waiting record read beside the lists", waitingSeedRows}, {"more waiting records than the read holds", 1}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			newLeaderSeedsWaitingTimes(t, c.rows)
		})
	}
}

func newLeaderSeedsWaitingTimes(t *testing.T, rows int) {
	st := store.New(testdb.New(t))
	ctx := context.Background()
	restart := time.Now().UTC().Truncate(time.Second)
	queued := restart.Add(-10 * time.Minute)
	preempted := restart.Add(-3 * time.Minute)

	record := func(uid, phase string, queuedAt time.Time, events ...store.WorkloadEvent) {
		t.Helper()
		r := store.WorkloadRecord{UID: uid, Namespace: "ns", Name: uid, Kind: "Pod", Phase: phase, QueuedAt: queuedAt, Gang: 1, RequestedGPUs: 1}
		events = append([]store.WorkloadEvent{{WorkloadUID: uid, At: queuedAt, Kind: "Queued"}}, events...)
		if err := st.RecordWorkloads(ctx, []store.WorkloadRecord{r}, events); err != nil {
			t.Fatal(err)
		}
	}
	record("vision", "Pending", queued)
	record("retry", "Preempted", queued, store.WorkloadEvent{WorkloadUID: "retry", At: preempted, Kind: "Preempted", Message: "Preempted."})
	record("ahead", "Pending", restart.Add(time.Hour))
	record("bound-since", "Pending", queued) // recorded waiting, bound since the last write

	cache := kube.NewCache("arbiter")
	pod := func(uid, node string) {
		cache.UpsertPod(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "ns", UID: types.UID(uid), CreationTimestamp: metav1.NewTime(queued)},
			Spec: corev1.PodSpec{SchedulerName: "arbiter", NodeName: node, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}},
		})
	}
	pod("vision", "")
	pod("retry", "")
	pod("ahead", "")
	pod("bound-since", "n1")
	pod("unrecorded", "")

	seeded := time.Now()
	read := &waitingRead{done: make(chan struct{})}
	var err error
	read.since, read.complete, err = st.AllWaitingSince(ctx, rows)
	close(read.done)
	if err != nil {
		t.Fatal(err)
	}
	if want := rows >= 4; read.complete != want {
		t.Fatalf("reading at most %d of the 4 waiting records: complete %v, want %v", rows, read.complete, want)
	}
	seedWaiting(ctx, st, read, cache, slog.New(slog.NewTextHandler(io.Discard, nil)))
	first := time.Now()
	cache.Settle(first) // the term's first cycle
	view := cache.Snapshot(first)

	got := map[string]time.Time{}
	for _, w := range view.Snapshot.Workloads {
		got[w.UID] = w.WaitingSince
	}
	want := map[string]time.Time{"vision": queued, "retry": preempted, "unrecorded": first, "bound-since": first}
	if ahead := got["ahead"]; ahead.Before(seeded) || ahead.After(first) {
		t.Errorf("a time recorded ahead of the clock became %v, want the seed's time (between %v and %v)", ahead, seeded, first)
	}
	delete(got, "ahead")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waiting since, after a restart (-want +got):\n%s", diff)
	}
}
