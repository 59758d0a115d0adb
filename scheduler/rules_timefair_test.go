package scheduler

import (
	"testing"
	"time"
)

// timeFair turns S28 on in the default pool with kValue k, and gives the projects' past use of it.
func (b *snapB) timeFair(k float64, used map[string]float64) *snapB {
	b.s.NodePools[0].TimeBasedFairness = TimeBasedFairness{Enabled: true, Window: 8 * time.Hour, HalfLife: 2 * time.Hour, KValue: k}
	b.s.HistoricalUsage = map[string]map[string]float64{b.s.NodePools[0].Name: used}
	return b
}

// pastUse gives the projects' past use of the default pool and leaves S28 off.
func (b *snapB) pastUse(used map[string]float64) *snapB {
	b.s.HistoricalUsage = map[string]map[string]float64{b.s.NodePools[0].Name: used}
	return b
}

func TestS28_TimeBasedFairShare(t *testing.T) {
	many := func(project string, n int) []*wlB {
		var ws []*wlB
		for i := range n {
			ws = append(ws, wl(project+string(rune('a'+i))).in(project).queued(i))
		}
		return ws
	}
	twoProjects := func() *snapB {
		return snap().gpuNodes("n", 1, 1).project(project("a", 0), project("b", 0)).wl(many("a", 1)...).wl(many("b", 1)...)
	}
	runRuleCases(t, []ruleCase{
		{"off: a freed GPU goes to the first by name, whatever the past",
			twoProjects().pastUse(map[string]float64{"a": 0.9}),
			Plan{Binds: []Bind{bind("aa-0", "n1")}, Pending: []PendingWorkload{pend("ba", "b", InsufficientCapacity, 1)}}},
		{"on: a freed GPU goes to the project that used the pool less",
			twoProjects().timeFair(1, map[string]float64{"a": 0.9}),
			Plan{Binds: []Bind{bind("ba-0", "n1")}, Pending: []PendingWorkload{pend("aa", "a", InsufficientCapacity, 1)}}},
		{"on with kValue 0: the past moves nothing",
			twoProjects().timeFair(0, map[string]float64{"a": 0.9}),
			Plan{Binds: []Bind{bind("aa-0", "n1")}, Pending: []PendingWorkload{pend("ba", "b", InsufficientCapacity, 1)}}},
		{"the surplus splits by weight corrected by past use",
			// W' = 1/2 each, k = 1: P(a) = 1/2 + (1/2 - 0.6) = 0.4, P(b) = 1; over-quota use
			// per P: b (less used), a, b, b, a, b
			snap().gpuNodes("n", 1, 6).project(project("a", 0), project("b", 0)).wl(many("a", 5)...).wl(many("b", 5)...).
				timeFair(1, map[string]float64{"a": 0.6}),
			Plan{
				Binds: []Bind{bind("ba-0", "n1"), bind("aa-0", "n1"), bind("bb-0", "n1"), bind("bc-0", "n1"), bind("ab-0", "n1"), bind("bd-0", "n1")},
				Pending: []PendingWorkload{
					pend("ac", "a", InsufficientCapacity, 1), pend("ad", "a", InsufficientCapacity, 2), pend("ae", "a", InsufficientCapacity, 3),
					pend("be", "b", InsufficientCapacity, 1)},
			}},
		{"deserved quota comes first whatever the past",
			snap().gpuNodes("n", 1, 2).project(project("a", 2), project("b", 0)).wl(many("a", 2)...).wl(many("b", 2)...).
				timeFair(5, map[string]float64{"a": 1}),
			Plan{
				Binds:   []Bind{bind("aa-0", "n1"), bind("ab-0", "n1")},
				Pending: []PendingWorkload{pend("ba", "b", InsufficientCapacity, 1), pend("bb", "b", InsufficientCapacity, 2)},
			}},
		{"a share the past brings to zero goes last, beside weight zero",
			// k = 3: P(a) = max(1/2 + 3·(1/2 - 0.8), 0) = 0; b takes every GPU, then a and c
			// (weight 0) wait
			snap().gpuNodes("n", 1, 3).project(project("a", 0), project("b", 0), project("c", 0).weight(0)).
				wl(many("a", 3)...).wl(many("b", 3)...).wl(many("c", 1)...).
				timeFair(3, map[string]float64{"a": 0.8}),
			Plan{
				Binds: []Bind{bind("ba-0", "n1"), bind("bb-0", "n1"), bind("bc-0", "n1")},
				Pending: []PendingWorkload{
					pend("aa", "a", InsufficientCapacity, 1), pend("ab", "a", InsufficientCapacity, 2), pend("ac", "a", InsufficientCapacity, 3),
					pend("ca", "c", InsufficientCapacity, 1)},
			}},
		{"queue priority (S25) still comes before the past",
			snap().gpuNodes("n", 1, 1).project(project("a", 0).prioPolicy(Open, 0), project("b", 0)).
				wl(wl("aa").in("a").prio("high")).wl(many("b", 1)...).
				timeFair(1, map[string]float64{"a": 0.9}),
			Plan{Binds: []Bind{bind("aa-0", "n1")}, Pending: []PendingWorkload{pend("ba", "b", InsufficientCapacity, 1)}}},
		{"departments are weighed by their projects' past use",
			snap().gpuNodes("n", 1, 1).dept("d1", 0, NoLimit).dept("d2", 0, NoLimit).
				project(project("a", 0).dept("d1"), project("b", 0).dept("d2")).wl(many("a", 1)...).wl(many("b", 1)...).
				timeFair(1, map[string]float64{"a": 0.7}),
			Plan{Binds: []Bind{bind("ba-0", "n1")}, Pending: []PendingWorkload{pend("aa", "a", InsufficientCapacity, 1)}}},
	})
}

func TestS28_ReclaimTakesFromThePastHeavyUserFirst(t *testing.T) {
	// x and y borrow one GPU each, equally far above their shares now; the owner reclaims one
	borrowing := func() *snapB {
		return snap().gpuNodes("n", 1, 2).project(project("owner", 1), project("x", 0), project("y", 0)).wl(
			wl("x1").in("x").on(1, "n1"), wl("y1").in("y").on(1, "n1"), wl("w").in("owner"))
	}
	runRuleCases(t, []ruleCase{
		{"off: from the first by name",
			borrowing().pastUse(map[string]float64{"y": 0.8}),
			Plan{Evictions: []Eviction{evict("x1", "x", "w", RuleReclaim, 1)}, Pending: []PendingWorkload{pendOn("w", "owner", 1, "n1")}}},
		{"on: from the project that used the pool more",
			borrowing().timeFair(1, map[string]float64{"y": 0.8}),
			Plan{Evictions: []Eviction{evict("y1", "y", "w", RuleReclaim, 1)}, Pending: []PendingWorkload{pendOn("w", "owner", 1, "n1")}}},
		{"on: nothing within deserved quota is reclaimed, however much it was used",
			snap().gpuNodes("n", 1, 2).project(project("owner", 1), project("x", 1)).wl(
				wl("x1").in("x").on(1, "n1"), wl("o1").in("owner").on(1, "n1"), wl("w").in("owner")).
				timeFair(5, map[string]float64{"x": 1}),
			Plan{Pending: []PendingWorkload{pend("w", "owner", InsufficientCapacity, 1)}}},
	})
}
