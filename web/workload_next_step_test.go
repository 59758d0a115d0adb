package web

import "testing"

// TestS23_NextStep: the sentence a waiting workload's page shows says what it waits for and
// what would let it start, with the figures of its pool and project.
func TestS23_NextStep(t *testing.T) {
	live := func(in nextStepInput) nextStepInput {
		in.Live, in.Pool, in.PoolGPUs, in.PoolAllocated = true, "a100", 8, 6
		return in
	}
	for _, tc := range []struct {
		name string
		in   nextStepInput
		want string
	}{
		{"S14 non-preemptible beyond deserved quota names the project's figures",
			live(nextStepInput{Phase: "Pending", Reason: "NonPreemptibleOverQuota", Project: "vision", RequestedGPUs: 4,
				Deserved: 6, Allocated: 7, AllocatedNonPreemptible: 6, Limit: -1}),
			"Needs 4 GPUs in pool a100; 2 of the pool's 8 are free; project vision has used 6 of its 6 deserved GPUs for non-preemptible work, " +
				"so a non-preemptible workload cannot start beyond them. Submit it as preemptible (it may then borrow idle GPUs), or wait for the project's other non-preemptible work to finish."},
		{"S14 without a cluster: no figures",
			nextStepInput{Phase: "Pending", Reason: "NonPreemptibleOverQuota", Project: "vision", RequestedGPUs: 1, Pool: "a100"},
			"Needs 1 GPU in pool a100; project vision has used its deserved GPUs for non-preemptible work, so a non-preemptible workload cannot start beyond them. " +
				"Submit it as preemptible (it may then borrow idle GPUs), or wait for the project's other non-preemptible work to finish."},
		{"S13 over the limit says how much must be freed",
			live(nextStepInput{Phase: "Pending", Reason: "OverLimit", Project: "vision", RequestedGPUs: 3, Deserved: 2, Limit: 4, Allocated: 4}),
			"Needs 3 GPUs in pool a100; 2 of the pool's 8 are free; project vision uses 4 of its limit of 4 GPUs there, so it cannot start until its other workloads free 3 GPUs. " +
				"Wait for them to finish, or ask an administrator to raise the limit."},
		{"S22 insufficient capacity, in quota, behind two others",
			live(nextStepInput{Phase: "Pending", Reason: "InsufficientCapacity", Project: "vision", RequestedGPUs: 4, QueuePosition: 3, Deserved: 8, Allocated: 2}),
			"Needs 4 GPUs in pool a100; 2 of the pool's 8 are free. It starts when other work in the pool finishes and frees them. 2 workloads of project vision are ahead of it in the queue."},
		{"S15 insufficient capacity beyond deserved: it can only borrow",
			live(nextStepInput{Phase: "Pending", Reason: "InsufficientCapacity", Project: "vision", RequestedGPUs: 4, QueuePosition: 2, Deserved: 2, Allocated: 2, Preemptible: true}),
			"Needs 4 GPUs in pool a100; 2 of the pool's 8 are free; project vision already uses 2 of its 2 deserved GPUs, so it can only borrow idle ones. " +
				"It starts when other work in the pool finishes and frees them. 1 workload of project vision is ahead of it in the queue."},
		{"S16 held by the minimum runtime of the work it would preempt: from when",
			live(nextStepInput{Phase: "Pending", Reason: "InsufficientCapacity", Project: "nlp", RequestedGPUs: 2, QueuePosition: 1, Deserved: 8, Allocated: 10, Preemptible: true,
				Message: "Not enough free capacity in pool a100 for 2 GPUs (0 free, or not on nodes that fit its pods); it starts when other work finishes. " +
					"Lower-priority work of its project has run less than the project's minimum runtime; preemption is possible from 2026-11-27T16:03:33Z."}),
			"Needs 2 GPUs in pool a100; 2 of the pool's 8 are free. The lower-priority work of project nlp it would preempt has not yet run the project's minimum runtime: " +
				"it may preempt it from Nov 27 16:03:33 UTC, or start sooner if other work in the pool finishes."},
		{"S27 held by the reclaim minimum runtime of the borrowed work it would take back: from when",
			live(nextStepInput{Phase: "Pending", Reason: "InsufficientCapacity", Project: "search", RequestedGPUs: 1, QueuePosition: 1, Deserved: 4, Allocated: 2,
				Message: "Not enough free capacity in pool a100 for 1 GPU (0 free, or not on nodes that fit its pods); it starts when other work finishes. " +
					"Borrowed work it could reclaim has run less than its project's reclaim minimum runtime; reclaim is possible from 2026-11-27T15:47:12Z."}),
			"Needs 1 GPU in pool a100; 2 of the pool's 8 are free. The borrowed GPUs it would take back have not yet run their project's reclaim minimum runtime: " +
				"it may reclaim them from Nov 27 15:47:12 UTC, or start sooner if other work in the pool finishes."},
		{"S27 held by its project's preemption delay: from when",
			live(nextStepInput{Phase: "Pending", Reason: "InsufficientCapacity", Project: "search", RequestedGPUs: 1, QueuePosition: 1, Deserved: 4, Allocated: 2,
				Message: "Not enough free capacity in pool a100 for 1 GPU (0 free, or not on nodes that fit its pods); it starts when other work finishes. " +
					"Its project's preemption delay lets it preempt or reclaim from 2026-11-27T15:47:12Z."}),
			"Needs 1 GPU in pool a100; 2 of the pool's 8 are free. Project search's preemption delay lets it preempt or reclaim from Nov 27 15:47:12 UTC; " +
				"it may start sooner if other work in the pool finishes."},
		{"S22 insufficient capacity without a pool named",
			nextStepInput{Phase: "Pending", Reason: "InsufficientCapacity", Project: "vision", RequestedGPUs: 1, QueuePosition: 1},
			"Needs 1 GPU. It starts when other work finishes and frees them."},
		{"S21 an incomplete gang waits for its pods",
			nextStepInput{Phase: "Pending", Reason: "GangIncomplete", Message: "Waiting for all 4 pods of the gang (2 exist); it starts once its controller has created them all."},
			"Waits for its controller to create all the pods of its gang; it is placed only whole. Waiting for all 4 pods of the gang (2 exist); it starts once its controller has created them all."},
		{"S19 a preemptor waits for its victims",
			nextStepInput{Phase: "Pending", Reason: "WaitingForEvictions"},
			"Room has been made for it: the workloads preempted for it are releasing their GPUs, and it starts as soon as they are gone."},
		{"S6 no project: the scheduler's sentence says what to do",
			nextStepInput{Phase: "Pending", Reason: "NoProject", Message: "The workload belongs to no project: add the label arbiter.dev/project=<project>."},
			"The workload belongs to no project: add the label arbiter.dev/project=<project>."},
		{"S20 suspended without a reason keeps its place",
			nextStepInput{Phase: "Suspended"},
			"Suspended: it keeps its place in the queue, and Arbiter resumes it once it is admitted again."},
		{"S24 preempted, not yet back",
			nextStepInput{Phase: "Preempted"},
			"Preempted: it waits for its controller to bring its pods back, and is then queued at its original place."},
		{"S24 a running workload has no next step", nextStepInput{Phase: "Running", Reason: "InsufficientCapacity"}, ""},
		{"S24 a finished workload has no next step", nextStepInput{Phase: "Completed"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextStep(tc.in); got != tc.want {
				t.Errorf("nextStep:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestS23_NextStepPoolFromMessage(t *testing.T) {
	for msg, want := range map[string]string{
		"Not enough free capacity in pool a100 for 4 GPUs (2 free, or not on nodes that fit its pods); it starts when other work finishes.":          "a100",
		"You have reached the limit of non-preemptible resources: project p would use 4 GPUs of non-preemptible work in pool default, deserved 2; …": "default",
		"Not enough free capacity for 4 GPUs; it starts when other work finishes.":                                                                   "",
	} {
		if got := reasonPool(msg); got != want {
			t.Errorf("reasonPool(%q) = %q, want %q", msg, got, want)
		}
	}
}
