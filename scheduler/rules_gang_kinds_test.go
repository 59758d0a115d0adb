package scheduler

import (
	"strconv"
	"testing"
)

// TestS5_GangFromTheOwnersReplicas: a JobSet's and a TrainJob's replicas (their first stage)
// are summed; an owner of a kind Arbiter does not know has the pods that exist;
// arbiter.dev/min-members overrides them; a LeaderWorkerSet's gang is its group size.
func TestS5_GangFromTheOwnersReplicas(t *testing.T) {
	cases := []struct {
		name string
		w    Workload
		want int
	}{
		{"JobSet's first stage", Workload{Kind: "JobSet", Group: "jobset.x-k8s.io", Gang: GangSpec{Replicas: []int32{8, 1}}}, 9},
		{"TrainJob's nodes", Workload{Kind: "TrainJob", Group: "trainer.kubeflow.org", Gang: GangSpec{Replicas: []int32{4}}}, 4},
		{"a kind not known: the pods that exist", Workload{Kind: "Gadget", Group: "example.com", Gang: GangSpec{Existing: 3}}, 3},
		{"min-members overrides", Workload{Kind: "JobSet", Group: "jobset.x-k8s.io", Gang: GangSpec{Replicas: []int32{8}},
			Annotations: map[string]string{AnnotationMinMembers: "2"}}, 2},
		{"LeaderWorkerSet's group", Workload{Kind: "LeaderWorkerSet", Group: "leaderworkerset.x-k8s.io", Gang: GangSpec{GroupSize: 4}}, 4},
		{"a Deployment: pod by pod", Workload{Kind: "Deployment", Group: "apps"}, 1},
	}
	for _, tc := range cases {
		if got, _ := ResolveGangSize(&tc.w); got != tc.want {
			t.Errorf("%s: gang %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestS20_KindsWithASuspendSwitch: JobSet and TrainJob are suspended in suspend mode, as Jobs,
// Kubeflow's jobs and Ray's are; a LeaderWorkerSet has no switch and is terminated.
func TestS20_KindsWithASuspendSwitch(t *testing.T) {
	for kind, want := range map[string]bool{"Job": true, "JobSet": true, "TrainJob": true, "PyTorchJob": true,
		"MPIJob": true, "RayCluster": true, "RayJob": true, "LeaderWorkerSet": false, "Deployment": false, "Gadget": false} {
		if got := CanSuspend(kind); got != want {
			t.Errorf("CanSuspend(%s) = %v, want %v", kind, got, want)
		}
	}
}

// leaderWorkerSet is a LeaderWorkerSet's workload: groups of size pods, one GPU each, of
// which the pods present are those whose group index is in groups.
func leaderWorkerSet(name string, size int, groups ...int) *snapB {
	b := wl(name).in("p").pods(len(groups))
	w := b.build()
	w.Kind, w.Group = "LeaderWorkerSet", "leaderworkerset.x-k8s.io"
	w.Gang.GroupSize = int32(size)
	for i, g := range groups {
		w.Pods[i].GangGroup = strconv.Itoa(g)
	}
	s := snap().project(project("p", 8))
	s.s.Workloads = append(s.s.Workloads, w)
	return s
}

// TestS5_EachLeaderWorkerSetGroupIsAGangOfItsOwn: a LeaderWorkerSet's groups are placed one
// whole group at a time; a group is not placed in part, nor before all its pods exist.
func TestS5_EachLeaderWorkerSetGroupIsAGangOfItsOwn(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"room for one group of two: that group runs, the other waits",
			leaderWorkerSet("lws", 2, 0, 0, 1, 1).gpuNodes("n", 1, 3),
			Plan{
				Binds:   []Bind{bind("lws-0", "n1"), bind("lws-1", "n1")},
				Pending: []PendingWorkload{pend("lws", "p", InsufficientCapacity, 1)},
			}},
		{"a group whose worker is not there yet waits for it",
			leaderWorkerSet("lws", 2, 0, 0, 1).gpuNodes("n", 1, 4),
			Plan{
				Binds:   []Bind{bind("lws-0", "n1"), bind("lws-1", "n1")},
				Pending: []PendingWorkload{pend("lws", "p", GangIncomplete, 1)},
			}},
	})
}
