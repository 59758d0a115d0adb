package scheduler

import "testing"

func TestS10_OrderInsideProject(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"priority first, then queue time, then name",
			snap().gpuNodes("n", 1, 2).project(project("p", 4)).wl(
				wl("late-low").in("p").prio("low").queued(1),
				wl("b-high").in("p").prio("high").queued(5),
				wl("a-high").in("p").prio("high").queued(5),
				wl("early-high").in("p").prio("high").queued(2)),
			Plan{
				Binds:   []Bind{bind("early-high-0", "n1"), bind("a-high-0", "n1")},
				Pending: []PendingWorkload{pend("b-high", "p", InsufficientCapacity, 1), pend("late-low", "p", InsufficientCapacity, 2)},
			}},
		{"priority orders only inside a project",
			snap().gpuNodes("n", 1, 1).project(project("a", 1), project("b", 1)).wl(
				wl("a-high").in("a").prio("very-high").queued(2),
				wl("b-low").in("b").prio("very-low").queued(1)),
			// both are below deserved; the tie between equally starved projects goes by name
			Plan{
				Binds:   []Bind{bind("a-high-0", "n1")},
				Pending: []PendingWorkload{pend("b-low", "b", InsufficientCapacity, 1)},
			}},
	})
}

func TestS11_HierarchicalFairShare(t *testing.T) {
	many := func(project string, n int) []*wlB {
		var ws []*wlB
		for i := range n {
			ws = append(ws, wl(project+string(rune('a'+i))).in(project).queued(i))
		}
		return ws
	}
	runRuleCases(t, []ruleCase{
		{"deserved first, most starved first",
			snap().gpuNodes("n", 1, 4).project(project("a", 1), project("b", 3)).wl(many("a", 3)...).wl(many("b", 4)...),
			Plan{
				Binds: []Bind{bind("aa-0", "n1"), bind("ba-0", "n1"), bind("bb-0", "n1"), bind("bc-0", "n1")},
				Pending: []PendingWorkload{
					pend("ab", "a", InsufficientCapacity, 1), pend("ac", "a", InsufficientCapacity, 2),
					pend("bd", "b", InsufficientCapacity, 1)},
			}},
		{"surplus shared by over-quota weight",
			snap().gpuNodes("n", 1, 6).project(project("a", 1).weight(1), project("b", 1).weight(3)).wl(many("a", 5)...).wl(many("b", 5)...),
			Plan{
				// deserved: aa, ba; surplus 4 split 1:3
				Binds: []Bind{bind("aa-0", "n1"), bind("ba-0", "n1"), bind("ab-0", "n1"), bind("bb-0", "n1"), bind("bc-0", "n1"), bind("bd-0", "n1")},
				Pending: []PendingWorkload{
					pend("ac", "a", InsufficientCapacity, 1), pend("ad", "a", InsufficientCapacity, 2), pend("ae", "a", InsufficientCapacity, 3),
					pend("be", "b", InsufficientCapacity, 1)},
			}},
		{"weight zero gets surplus only when nobody weighted wants it",
			snap().gpuNodes("n", 1, 3).project(project("a", 0).weight(0), project("b", 0).weight(1)).wl(many("a", 2)...).wl(many("b", 2)...),
			Plan{
				Binds:   []Bind{bind("ba-0", "n1"), bind("bb-0", "n1"), bind("aa-0", "n1")},
				Pending: []PendingWorkload{pend("ab", "a", InsufficientCapacity, 1)},
			}},
		{"departments share first, then their projects",
			// d1 holds a and b, d2 holds c; d2 is the most starved department
			snap().gpuNodes("n", 1, 4).dept("d1", 2, NoLimit).dept("d2", 2, NoLimit).
				project(project("a", 1).dept("d1"), project("b", 1).dept("d1"), project("c", 2).dept("d2")).
				wl(many("a", 2)...).wl(many("b", 2)...).wl(many("c", 3)...),
			Plan{
				Binds: []Bind{bind("aa-0", "n1"), bind("ca-0", "n1"), bind("ba-0", "n1"), bind("cb-0", "n1")},
				Pending: []PendingWorkload{
					pend("ab", "a", InsufficientCapacity, 1), pend("bb", "b", InsufficientCapacity, 1),
					pend("cc", "c", InsufficientCapacity, 1)},
			}},
	})
}

func TestS12_Queueing(t *testing.T) {
	queue := func(p *projB) *snapB {
		return snap().node(node("n1").gpus(4).occupied(2)).project(p).wl(
			wl("big").in("p").gpus(4).queued(1),
			wl("small").in("p").queued(2))
	}
	runRuleCases(t, []ruleCase{
		{"best-effort passes a blocked head", queue(project("p", 8)),
			Plan{
				Binds:   []Bind{bind("small-0", "n1")},
				Pending: []PendingWorkload{pend("big", "p", InsufficientCapacity, 1)},
			}},
		{"strict keeps everything behind a blocked head", queue(project("p", 8).strict()),
			Plan{Pending: []PendingWorkload{
				pend("big", "p", InsufficientCapacity, 1),
				pend("small", "p", BehindStrictHead, 2)}}},
	})
}

func TestS13_Limit(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"project limit",
			snap().gpuNodes("n", 1, 8).project(project("p", 1).limit(2)).wl(
				wl("r").in("p").gpus(2).on(1, "n1"),
				wl("w").in("p")),
			Plan{Pending: []PendingWorkload{{Workload: "uid-w", Namespace: "ns", Name: "w", Project: "p",
				Priority: prioLow, Preemptibility: Preemptible, Reason: OverLimit, QueuePosition: 1, RequestedGPUs: 1,
				Message: "project p would use 3 GPUs in pool default, limit 2; wait for its other workloads to finish or ask an administrator to raise the limit."}}}},
		{"department limit",
			snap().gpuNodes("n", 1, 8).dept("d", 1, 2).project(project("a", 1).dept("d"), project("b", 0).dept("d")).wl(
				wl("r").in("a").gpus(2).on(1, "n1"),
				wl("w").in("b")),
			Plan{Pending: []PendingWorkload{pend("w", "b", OverLimit, 1)}}},
		{"up to the limit is fine",
			snap().gpuNodes("n", 1, 8).project(project("p", 1).limit(2)).wl(wl("r").in("p").on(1, "n1"), wl("w").in("p")),
			Plan{Binds: []Bind{bind("w-0", "n1")}}},
	})
}

func TestS14_NonPreemptibleInsideDeserved(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"project deserved bounds non-preemptible work",
			snap().gpuNodes("n", 1, 8).project(project("p", 2)).wl(
				wl("r").in("p").np().gpus(2).on(1, "n1"),
				wl("np").in("p").np().queued(1),
				wl("pre").in("p").queued(2)),
			Plan{
				Binds:   []Bind{bind("pre-0", "n1")},
				Pending: []PendingWorkload{pend("np", "p", NonPreemptibleOverQuota, 1)},
			}},
		{"department deserved bounds it too",
			snap().gpuNodes("n", 1, 8).dept("d", 1, NoLimit).project(project("a", 1).dept("d"), project("b", 1).dept("d")).wl(
				wl("r").in("a").np().on(1, "n1"),
				wl("np").in("b").np()),
			Plan{Pending: []PendingWorkload{pend("np", "b", NonPreemptibleOverQuota, 1)}}},
		{"preemptible work in the quota does not count",
			snap().gpuNodes("n", 1, 8).project(project("p", 2)).wl(
				wl("r").in("p").gpus(2).on(1, "n1"),
				wl("np").in("p").np().gpus(2)),
			Plan{Binds: []Bind{bind("np-0", "n1")}}},
	})
}

func TestS15_Borrowing(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"preemptible work borrows free GPUs up to the limit",
			snap().gpuNodes("n", 1, 8).project(project("p", 1).limit(3), project("idle", 7)).wl(
				wl("a").in("p").queued(1), wl("b").in("p").queued(2), wl("c").in("p").queued(3), wl("d").in("p").queued(4)),
			Plan{
				Binds:   []Bind{bind("a-0", "n1"), bind("b-0", "n1"), bind("c-0", "n1")},
				Pending: []PendingWorkload{pend("d", "p", OverLimit, 1)},
			}},
		{"borrowed work is the first to go",
			snap().gpuNodes("n", 1, 2).project(project("p", 1), project("owner", 1)).wl(
				wl("in-quota").in("p").prio("low").on(1, "n1"),
				wl("borrowed").in("p").prio("high").preemptible().on(2, "n1"),
				wl("w").in("owner")),
			// the ranking puts higher priority first: the low one is in quota, the high one borrows
			Plan{
				Evictions: []Eviction{evict("in-quota", "p", "w", RuleReclaim, 1)},
				Pending:   []PendingWorkload{pendOn("w", "owner", 1, "n1")},
			}},
	})
}

func TestS16_Preemption(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"lowest priority first",
			snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(
				wl("medium").in("p").prio("medium").on(1, "n1"),
				wl("verylow").in("p").prio("very-low").on(2, "n1"),
				wl("w").in("p").prio("high").preemptible()),
			Plan{
				Evictions: []Eviction{evict("verylow", "p", "w", RulePreemption, 1)},
				Pending:   []PendingWorkload{pendOn("w", "p", 1, "n1")},
			}},
		{"equal priority: oldest started first by default",
			snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(
				wl("new").in("p").on(20, "n1"), wl("old").in("p").on(10, "n1"),
				wl("w").in("p").prio("high").preemptible()),
			Plan{
				Evictions: []Eviction{evict("old", "p", "w", RulePreemption, 1)},
				Pending:   []PendingWorkload{pendOn("w", "p", 1, "n1")},
			}},
		{"equal priority: newest first when the project says so",
			snap().gpuNodes("n", 1, 2).project(project("p", 2).newestFirst()).wl(
				wl("new").in("p").on(20, "n1"), wl("old").in("p").on(10, "n1"),
				wl("w").in("p").prio("high").preemptible()),
			Plan{
				Evictions: []Eviction{evict("new", "p", "w", RulePreemption, 1)},
				Pending:   []PendingWorkload{pendOn("w", "p", 1, "n1")},
			}},
		{"minimum runtime spares young work",
			snap().at(30).gpuNodes("n", 1, 2).project(project("p", 2).minRuntime(15*60)).wl(
				wl("young").in("p").on(20, "n1"), wl("old").in("p").on(25, "n1").prio("very-low"),
				wl("w").in("p").prio("high").preemptible()).
				wl(),
			Plan{Pending: []PendingWorkload{pend("w", "p", InsufficientCapacity, 1)}}},
		{"unneeded victims are given back",
			snap().gpuNodes("n", 1, 4).project(project("p", 4)).wl(
				wl("one").in("p").on(1, "n1"),
				wl("three").in("p").gpus(3).pods(1).on(2, "n1"),
				wl("w").in("p").prio("high").preemptible().gpus(3)),
			// oldest first takes "one", then "three"; "one" alone was never enough
			Plan{
				Evictions: []Eviction{evict("three", "p", "w", RulePreemption, 3)},
				Pending:   []PendingWorkload{pendOn("w", "p", 1, "n1")},
			}},
		{"lowest priority first across the project's node pools, not the first pool that would do",
			twoPools().node(node("a1").gpus(2).label("gpu", "a100"), node("h1").gpus(2).label("gpu", "h100")).
				project(project("p", 0).quota("a100", 2, NoLimit, 2).quota("h100", 2, NoLimit, 2).pools("a100", "h100")).wl(
				wl("medium").in("p").prio("medium").gpus(2).on(1, "a1"),
				wl("verylow").in("p").prio("very-low").gpus(2).on(2, "h1"),
				wl("w").in("p").prio("high").preemptible().gpus(2)),
			Plan{
				Evictions: []Eviction{evict("verylow", "p", "w", RulePreemption, 2)},
				Pending:   []PendingWorkload{pendOn("w", "p", 1, "h1")},
			}},
		{"equal priority across node pools: the project's order of victims, then its order of pools",
			twoPools().node(node("a1").gpus(2).label("gpu", "a100"), node("h1").gpus(2).label("gpu", "h100")).
				project(project("p", 0).quota("a100", 2, NoLimit, 2).quota("h100", 2, NoLimit, 2).pools("a100", "h100")).wl(
				wl("newer").in("p").gpus(2).on(20, "a1"),
				wl("older").in("p").gpus(2).on(10, "h1"),
				wl("w").in("p").prio("high").preemptible().gpus(2)),
			Plan{
				Evictions: []Eviction{evict("older", "p", "w", RulePreemption, 2)},
				Pending:   []PendingWorkload{pendOn("w", "p", 1, "h1")},
			}},
		{"a victim in a pool where the preemptor can never fit is not taken",
			twoPools().node(node("a1").gpus(1).label("gpu", "a100"), node("h1").gpus(2).label("gpu", "h100")).
				project(project("p", 0).quota("a100", 2, NoLimit, 2).quota("h100", 2, NoLimit, 2).pools("a100", "h100")).wl(
				wl("small").in("p").prio("very-low").on(1, "a1"),
				wl("mid").in("p").prio("low").gpus(2).on(2, "h1"),
				wl("w").in("p").prio("high").preemptible().gpus(2)),
			Plan{
				Evictions: []Eviction{evict("mid", "p", "w", RulePreemption, 2)},
				Pending:   []PendingWorkload{pendOn("w", "p", 1, "h1")},
			}},
		{"never equal or higher priority, never non-preemptible",
			snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(
				wl("same").in("p").prio("high").preemptible().on(1, "n1"),
				wl("np").in("p").prio("very-low").np().on(2, "n1"),
				wl("w").in("p").prio("high").preemptible()),
			Plan{Pending: []PendingWorkload{pend("w", "p", InsufficientCapacity, 1)}}},
		{"the preemptor must then respect its limit",
			snap().gpuNodes("n", 1, 3).project(project("p", 1).limit(2)).wl(
				wl("low").in("p").on(1, "n1"), wl("low2").in("p").on(2, "n1"),
				wl("w").in("p").prio("high").preemptible().gpus(3)),
			Plan{Pending: []PendingWorkload{pend("w", "p", OverLimit, 1)}}},
		{"the preemptor must then respect non-preemptible quota",
			snap().gpuNodes("n", 1, 2).project(project("p", 1)).wl(
				wl("npr").in("p").np().prio("high").on(1, "n1"), wl("low").in("p").on(2, "n1"),
				wl("w").in("p").prio("very-high").np()),
			Plan{Pending: []PendingWorkload{pend("w", "p", NonPreemptibleOverQuota, 1)}}},
	})
}

func TestS17_Reclaim(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"from the project furthest above its fair share, its lowest-ranked borrowed work first",
			snap().gpuNodes("n", 1, 5).project(project("owner", 2), project("x", 1), project("y", 1)).wl(
				wl("x1").in("x").on(1, "n1"), wl("x2").in("x").on(2, "n1"), wl("x3").in("x").on(3, "n1"),
				wl("y1").in("y").on(1, "n1"), wl("y2").in("y").on(2, "n1"),
				wl("w").in("owner").gpus(1), wl("u").in("owner").queued(5)),
			// x borrows 2, y 1: x is furthest above its share and loses its latest start, x3;
			// then x and y are equally far above and the first by name, x, loses x2.
			Plan{
				Evictions: []Eviction{
					evict("x3", "x", "w", RuleReclaim, 1),
					evict("x2", "x", "u", RuleReclaim, 1)},
				Pending: []PendingWorkload{pendOn("w", "owner", 1, "n1"), pendOn("u", "owner", 2, "n1")},
			}},
		{"in-quota work is never reclaimed",
			snap().gpuNodes("n", 1, 2).project(project("owner", 1), project("x", 1)).wl(
				wl("x1").in("x").on(1, "n1"), wl("o1").in("owner").on(1, "n1"),
				wl("w").in("owner")),
			Plan{Pending: []PendingWorkload{pend("w", "owner", InsufficientCapacity, 1)}}},
		{"only in-quota work reclaims",
			snap().gpuNodes("n", 1, 3).project(project("owner", 1), project("x", 1)).wl(
				wl("x1").in("x").on(1, "n1"), wl("x2").in("x").on(2, "n1"), wl("o1").in("owner").prio("very-low").np().on(1, "n1"),
				wl("w").in("owner")),
			Plan{Pending: []PendingWorkload{pend("w", "owner", InsufficientCapacity, 1)}}},
		{"regardless of priority",
			snap().gpuNodes("n", 1, 2).project(project("owner", 1), project("x", 1)).wl(
				wl("x1").in("x").prio("very-high").np().on(1, "n1"), wl("x2").in("x").prio("high").preemptible().on(2, "n1"),
				wl("w").in("owner").prio("very-low")),
			Plan{
				Evictions: []Eviction{evict("x2", "x", "w", RuleReclaim, 1)},
				Pending:   []PendingWorkload{pendOn("w", "owner", 1, "n1")},
			}},
		{"a department within its quota takes back from a borrowing department",
			snap().gpuNodes("n", 1, 2).dept("d1", 1, NoLimit).dept("d2", 1, NoLimit).
				project(project("owner", 1).dept("d1"), project("x", 0).dept("d2")).wl(
				wl("x1").in("x").on(1, "n1"), wl("x2").in("x").on(2, "n1"),
				wl("w").in("owner")),
			Plan{
				Evictions: []Eviction{evict("x2", "x", "w", RuleReclaim, 1)},
				Pending:   []PendingWorkload{pendOn("w", "owner", 1, "n1")},
			}},
	})
}

func TestS18_OrderOfAttempts(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"free capacity before any eviction",
			snap().gpuNodes("n", 1, 2).project(project("p", 2), project("x", 0)).wl(
				wl("x1").in("x").on(1, "n1"), wl("low").in("p").prio("very-low").on(1, "n1").pods(0),
				wl("w").in("p").prio("high")),
			Plan{Binds: []Bind{bind("w-0", "n1")}}},
		{"reclaim before preemption",
			snap().gpuNodes("n", 1, 2).project(project("p", 2), project("x", 0)).wl(
				wl("x1").in("x").on(1, "n1"), wl("low").in("p").prio("very-low").on(1, "n1"),
				wl("w").in("p").prio("high").preemptible()),
			Plan{
				Evictions: []Eviction{evict("x1", "x", "w", RuleReclaim, 1)},
				Pending:   []PendingWorkload{pendOn("w", "p", 1, "n1")},
			}},
	})
}

func TestS19_AntiThrashing(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"no eviction for a workload that would not fit anyway",
			snap().gpuNodes("n", 2, 2).project(project("p", 8)).wl(
				wl("a").in("p").on(1, "n1"), wl("b").in("p").on(1, "n2"),
				wl("big").in("p").prio("high").preemptible().gpus(4)),
			// 4 GPUs on one node are never available on 2-GPU nodes
			Plan{Pending: []PendingWorkload{pend("big", "p", NoMatchingNodes, 1)}}},
		{"evictions of a cycle are decided together",
			snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(
				wl("a").in("p").on(1, "n1"), wl("b").in("p").on(2, "n1"),
				wl("w1").in("p").prio("high").preemptible().queued(1), wl("w2").in("p").prio("high").preemptible().queued(2)),
			Plan{
				Evictions: []Eviction{evict("a", "p", "w1", RulePreemption, 1), evict("b", "p", "w2", RulePreemption, 1)},
				Pending:   []PendingWorkload{pendOn("w1", "p", 1, "n1"), pendOn("w2", "p", 2, "n1")},
			}},
		{"no new victim while an earlier one terminates",
			snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(
				wl("a").in("p").on(1, "n1").terminating("w"), wl("b").in("p").on(2, "n1"),
				wl("w").in("p").prio("high").preemptible().gpus(2)),
			Plan{Pending: []PendingWorkload{pendOn("w", "p", 1, "n1")}}},
		{"a suspended victim whose pods still run is not evicted again, nor replaced by another",
			snap().gpuNodes("n", 1, 2).project(project("p", 2).suspendMode()).wl(
				wl("a").kind("Job", "batch").in("p").on(1, "n1").beingSuspended("w"), wl("b").kind("Job", "batch").in("p").on(2, "n1"),
				wl("w").in("p").prio("high").preemptible()),
			Plan{Pending: []PendingWorkload{pendOn("w", "p", 1, "n1")}}},
		{"a nominated workload goes first once its victims are gone",
			snap().gpuNodes("n", 1, 1).project(project("p", 1), project("a", 1)).wl(
				wl("early").in("a").queued(0),
				wl("w").in("p").nominated().queued(9)),
			Plan{
				Binds:   []Bind{bind("w-0", "n1")},
				Pending: []PendingWorkload{pend("early", "a", InsufficientCapacity, 1)},
			}},
	})
}

func TestS20_EvictionMode(t *testing.T) {
	suspendable := wl("job").kind("Job", "batch").in("p").on(1, "n1")
	s := snap().gpuNodes("n", 1, 1).project(project("p", 1).suspendMode()).wl(
		suspendable, wl("w").in("p").prio("high").preemptible())
	want := evict("job", "p", "w", RulePreemption, 1)
	want.Mode = Suspend
	runRuleCases(t, []ruleCase{
		{"suspend where the kind can", s, Plan{
			Evictions: []Eviction{want},
			Pending:   []PendingWorkload{pendOn("w", "p", 1, "n1")},
		}},
		{"terminate where it cannot",
			snap().gpuNodes("n", 1, 1).project(project("p", 1).suspendMode()).wl(
				wl("pod").in("p").on(1, "n1"), wl("w").in("p").prio("high").preemptible()),
			Plan{
				Evictions: []Eviction{evict("pod", "p", "w", RulePreemption, 1)},
				Pending:   []PendingWorkload{pendOn("w", "p", 1, "n1")},
			}},
		{"a suspended workload is resumed when it fits",
			snap().gpuNodes("n", 1, 4).project(project("p", 4)).wl(
				wl("job").kind("Job", "batch").in("p").suspended().pods(2).gang(2), wl("later").in("p").gpus(2).queued(5)),
			Plan{Resumes: []Resume{resume("job", "p", 2)}, Binds: []Bind{bind("later-0", "n1")}}},
		{"its GPUs are set aside for it",
			snap().gpuNodes("n", 1, 2).project(project("p", 4)).wl(
				wl("job").kind("Job", "batch").in("p").suspended().pods(2).gang(2), wl("later").in("p").queued(5)),
			Plan{Resumes: []Resume{resume("job", "p", 2)}, Pending: []PendingWorkload{pend("later", "p", InsufficientCapacity, 1)}}},
	})
}

// twoPools is a snapshot with node pools a100 and h100, nodes chosen by the label gpu.
func twoPools() *snapB {
	return snap().pool("a100", "gpu", "a100", Binpack).pool("h100", "gpu", "h100", Binpack)
}

func TestS21_Placement(t *testing.T) {
	gpuPool := twoPools
	runRuleCases(t, []ruleCase{
		{"binpack takes the fullest node that fits",
			snap().node(node("n1").gpus(8), node("n2").gpus(8).occupied(6), node("n3").gpus(8).occupied(7)).
				project(project("p", 8)).wl(wl("w").in("p").gpus(2)),
			Plan{Binds: []Bind{bind("w-0", "n2")}}},
		{"spread takes the emptiest",
			snap().spread().node(node("n1").gpus(8).occupied(1), node("n2").gpus(8), node("n3").gpus(8).occupied(7)).
				project(project("p", 8)).wl(wl("w").in("p").gpus(2)),
			Plan{Binds: []Bind{bind("w-0", "n2")}}},
		{"a gang is placed whole, across nodes",
			snap().gpuNodes("n", 2, 4).project(project("p", 8)).wl(wl("g").in("p").gang(3).pods(3).gpus(2)),
			Plan{Binds: []Bind{bind("g-0", "n1"), bind("g-1", "n1"), bind("g-2", "n2")}}},
		{"or not at all",
			snap().gpuNodes("n", 2, 4).project(project("p", 8)).wl(wl("g").in("p").gang(3).pods(3).gpus(3)),
			Plan{Pending: []PendingWorkload{pend("g", "p", InsufficientCapacity, 1)}}},
		{"node pools in the project's order",
			gpuPool().node(node("a1").gpus(1).label("gpu", "a100"), node("h1").gpus(2).label("gpu", "h100")).
				project(project("p", 0).quota("a100", 4, NoLimit, 2).quota("h100", 4, NoLimit, 2).pools("h100", "a100")).wl(
				wl("x").in("p").queued(1).gpus(2), wl("y").in("p").queued(2), wl("z").in("p").queued(3)),
			Plan{
				Binds:   []Bind{bind("x-0", "h1"), bind("y-0", "a1")},
				Pending: []PendingWorkload{pend("z", "p", InsufficientCapacity, 1)},
			}},
		{"node selector",
			snap().node(node("n1").gpus(8), node("n2").gpus(8).label("zone", "b")).project(project("p", 8)).wl(
				wl("w").in("p").selector("zone", "b")),
			Plan{Binds: []Bind{bind("w-0", "n2")}}},
		{"required node affinity",
			snap().node(node("n1").gpus(8).label("mem", "40"), node("n2").gpus(8).label("mem", "80")).project(project("p", 8)).wl(
				wl("w").in("p").affinity(NodeSelectorRequirement{Key: "mem", Operator: "Gt", Values: []string{"50"}})),
			Plan{Binds: []Bind{bind("w-0", "n2")}}},
		{"taints keep pods away unless tolerated",
			snap().node(node("n1").gpus(8).taint("dedicated", "infer", "NoSchedule"), node("n2").gpus(8).taint("x", "", "NoExecute")).
				project(project("p", 8)).wl(
				wl("plain").in("p").queued(1),
				wl("tolerant").in("p").queued(2).tolerate(Toleration{Key: "dedicated", Operator: "Equal", Value: "infer"})),
			Plan{
				Binds:   []Bind{bind("tolerant-0", "n1")},
				Pending: []PendingWorkload{pend("plain", "p", NoMatchingNodes, 1)},
			}},
		{"not ready and cordoned nodes take nothing",
			snap().node(node("n1").gpus(8).notReady(), node("n2").gpus(8).cordoned(), node("n3").gpus(1)).project(project("p", 8)).wl(
				wl("w").in("p").gpus(2), wl("v").in("p").queued(2)),
			Plan{
				Binds:   []Bind{bind("v-0", "n3")},
				Pending: []PendingWorkload{pend("w", "p", NoMatchingNodes, 1)},
			}},
		{"cpu counts for fit",
			snap().node(node("n1").gpus(8).cpu(1500), node("n2").gpus(8)).project(project("p", 8)).wl(
				wl("a").in("p").cpu(1000).queued(1), wl("b").in("p").cpu(1000).queued(2)),
			Plan{Binds: []Bind{bind("a-0", "n1"), bind("b-0", "n2")}}},
		{"pods of a non-gang workload go one by one",
			snap().gpuNodes("n", 1, 2).project(project("p", 8)).wl(wl("d").kind("Deployment", "apps").typ("Deployment").in("p").pods(3)),
			Plan{
				Binds:   []Bind{bind("d-0", "n1"), bind("d-1", "n1")},
				Pending: []PendingWorkload{pend("d", "p", InsufficientCapacity, 1)},
			}},
	})
}

func TestS23_Reasons(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"no project",
			snap().gpuNodes("n", 1, 1).wl(wl("orphan")),
			Plan{Pending: []PendingWorkload{{Workload: "uid-orphan", Namespace: "ns", Name: "orphan",
				Priority: prioLow, Preemptibility: Preemptible, Reason: NoProject, RequestedGPUs: 1,
				Message: "The workload belongs to no project: add the label arbiter.dev/project=<project> or run it in a namespace that a project owns."}}}},
		{"gang incomplete",
			snap().gpuNodes("n", 1, 8).project(project("p", 8)).wl(wl("g").in("p").gang(4).pods(3)),
			Plan{Pending: []PendingWorkload{{Workload: "uid-g", Namespace: "ns", Name: "g", Project: "p",
				Priority: prioLow, Preemptibility: Preemptible, Reason: GangIncomplete, QueuePosition: 1, RequestedGPUs: 3,
				Message: "Waiting for all 4 pods of the gang; it starts once its controller has created them all."}}}},
		{"insufficient capacity",
			snap().gpuNodes("n", 2, 2).project(project("p", 8)).wl(wl("w").in("p").gpus(2).pods(3).gang(3), wl("x").in("p").on(0, "n1")),
			Plan{Pending: []PendingWorkload{{Workload: "uid-w", Namespace: "ns", Name: "w", Project: "p",
				Priority: prioLow, Preemptibility: Preemptible, Reason: InsufficientCapacity, QueuePosition: 1, RequestedGPUs: 6,
				Message: "Not enough free capacity in pool default for 6 GPUs (3 free, or not on nodes that fit its pods); it starts when other work finishes."}}}},
		{"no matching nodes",
			snap().gpuNodes("n", 1, 8).project(project("p", 8)).wl(wl("w").in("p").selector("gpu", "h200")),
			Plan{Pending: []PendingWorkload{{Workload: "uid-w", Namespace: "ns", Name: "w", Project: "p",
				Priority: prioLow, Preemptibility: Preemptible, Reason: NoMatchingNodes, QueuePosition: 1, RequestedGPUs: 1,
				Message: "No node in pool default can ever host its pods (node selector, affinity, tolerations or size); change the pod spec or ask an administrator for matching nodes."}}}},
		{"behind strict head",
			snap().gpuNodes("n", 1, 1).project(project("p", 8).strict()).wl(wl("head").in("p").gpus(2).queued(1), wl("w").in("p").queued(2)),
			Plan{Pending: []PendingWorkload{
				{Workload: "uid-head", Namespace: "ns", Name: "head", Project: "p", Priority: prioLow, Preemptibility: Preemptible,
					Reason: NoMatchingNodes, QueuePosition: 1, RequestedGPUs: 2,
					Message: "No node in pool default can ever host its pods (node selector, affinity, tolerations or size); change the pod spec or ask an administrator for matching nodes."},
				{Workload: "uid-w", Namespace: "ns", Name: "w", Project: "p", Priority: prioLow, Preemptibility: Preemptible,
					Reason: BehindStrictHead, QueuePosition: 2, RequestedGPUs: 1,
					Message: "The project queues strictly: waiting behind head, which cannot start yet; it starts after that one does."}}}},
		{"waiting for evictions",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(wl("v").in("p").on(0, "n1"), wl("w").in("p").prio("high").preemptible()),
			Plan{
				Evictions: []Eviction{evict("v", "p", "w", RulePreemption, 1)},
				Pending: []PendingWorkload{{Workload: "uid-w", Namespace: "ns", Name: "w", Project: "p", Priority: Priority{"high", 125},
					Preemptibility: Preemptible, Reason: WaitingForEvictions, QueuePosition: 1, RequestedGPUs: 1, NominatedNodes: []string{"n1"}, NominatedGPUs: 1,
					Message: "Waiting for preempted workloads to release their GPUs on n1; it starts when they are gone."}}}},
	})
}
