package scheduler

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The statement, alone: every attempt of a cycle marks, changes the simulated cluster (places
// pods, evicts and restores workloads) and then rolls back to its mark or commits. A rollback
// must leave no trace — free resources, quota use, the pools' bitsets of nodes by free GPUs,
// pods' nodes, evictions — and a commit keeps exactly what came after its mark. Like KAI's
// statement_test.go, as a table of steps.

// cycleState is what a statement may change, copied so that two moments can be compared.
type cycleState struct {
	NodeFree  map[string]Resources
	PodNode   map[string]int32
	Evicted   map[string]bool
	Alloc     map[string][]int64 // by project or department, per pool
	AllocNP   map[string][]int64
	Running   map[string][]int64
	FreeGPUs  []int64      // per pool
	Buckets   [][][]uint64 // per pool, by free GPUs: the nodes' order a placement reads
	BucketLen [][]int32
}

func observe(c *cycle) cycleState {
	s := cycleState{NodeFree: map[string]Resources{}, PodNode: map[string]int32{}, Evicted: map[string]bool{},
		Alloc: map[string][]int64{}, AllocNP: map[string][]int64{}, Running: map[string][]int64{}}
	for _, n := range c.nodes {
		s.NodeFree[n.node.Name] = n.free
	}
	for _, p := range c.pods {
		s.PodNode[p.pod.Name] = p.node
	}
	for _, w := range c.wls {
		s.Evicted[w.w.Name] = w.evicted
	}
	groups := make([]*group, 0, len(c.projects)+len(c.depts))
	for i := range c.projects {
		groups = append(groups, &c.projects[i].group)
	}
	for i := range c.depts {
		groups = append(groups, &c.depts[i].group)
	}
	for _, g := range groups {
		for _, sh := range g.shares {
			s.Alloc[g.name] = append(s.Alloc[g.name], sh.alloc)
			s.AllocNP[g.name] = append(s.AllocNP[g.name], sh.allocNP)
			s.Running[g.name] = append(s.Running[g.name], sh.running)
		}
	}
	for _, p := range c.pools {
		s.FreeGPUs = append(s.FreeGPUs, p.freeGPUs)
		buckets := make([][]uint64, len(p.buckets))
		for g, b := range p.buckets {
			buckets[g] = slices.Clone(b)
		}
		s.Buckets = append(s.Buckets, buckets)
		s.BucketLen = append(s.BucketLen, slices.Clone(p.bucketLen))
	}
	return s
}

// statementStep is one step of a case: a change, a mark, a rollback or a commit.
type statementStep struct {
	place   string // a pod's name, placed on node
	node    string
	evict   string // a workload's name, evicted for "waiting"
	restore string // a workload's name, given back
	mark    bool
	// rollback or commit to the mark taken at the step of that index
	rollbackTo, commitTo *int
	// wantCommitted is the kinds committed, when the step commits
	wantCommitted []opKind
}

func at(i int) *int { return &i }

func TestStatement_RollbackLeavesNoTraceAndCommitKeepsWhatFollowsItsMark(t *testing.T) {
	cases := []struct {
		name  string
		steps []statementStep
		// wantLike: after the last step the state equals the state before the step of this
		// index (0: as loaded); nil: it must differ from it (changes kept)
		wantLike *int
	}{
		{
			name: "placements rolled back",
			steps: []statementStep{
				{mark: true},
				{place: "waiting-0", node: "n2"},
				{place: "waiting-1", node: "n2"},
				{rollbackTo: at(0)},
			},
			wantLike: at(0),
		},
		{
			name: "an eviction and the preemptor's placement on the freed node rolled back",
			steps: []statementStep{
				{mark: true},
				{evict: "running"},
				{place: "waiting-0", node: "n1"},
				{place: "waiting-1", node: "n1"},
				{rollbackTo: at(0)},
			},
			wantLike: at(0),
		},
		{
			name: "a restore (pruning a victim) rolled back evicts again",
			steps: []statementStep{
				{evict: "running"},
				{mark: true},
				{restore: "running"},
				{rollbackTo: at(1)},
			},
			wantLike: at(1),
		},
		{
			name: "nested marks: the inner rollback keeps the outer attempt's changes",
			steps: []statementStep{
				{mark: true},
				{place: "waiting-0", node: "n2"},
				{mark: true},
				{evict: "running"},
				{place: "waiting-1", node: "n1"},
				{rollbackTo: at(2)},
			},
			wantLike: at(2),
		},
		{
			name: "a commit is final: the next attempt's rollback stops at it",
			steps: []statementStep{
				{mark: true},
				{evict: "running"},
				{commitTo: at(0), wantCommitted: []opKind{opEvict}},
				{mark: true},
				{place: "waiting-0", node: "n1"},
				{rollbackTo: at(3)},
			},
			wantLike: at(3),
		},
		{
			name: "a commit keeps the changes and returns them in order",
			steps: []statementStep{
				{mark: true},
				{evict: "running"},
				{place: "waiting-0", node: "n1"},
				{place: "waiting-1", node: "n1"},
				{commitTo: at(0), wantCommitted: []opKind{opEvict, opPlace, opPlace}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := snap().gpuNodes("n", 2, 8).
				project(project("team", 8)).
				wl(wl("running").in("team").gpus(4).pods(2).on(1, "n1", "n1"),
					wl("waiting").in("team").gpus(4).pods(2)).build()
			var c cycle
			c.st.c = &c
			c.scratch = scratches.Get().(*scratch)
			defer c.release()
			c.load(s)
			pods := map[string]int32{}
			for i, p := range c.pods {
				pods[p.pod.Name] = int32(i)
			}
			wls, nodes := map[string]int32{}, map[string]int32{}
			for i, w := range c.wls {
				wls[w.w.Name] = int32(i)
			}
			for i, n := range c.nodes {
				nodes[n.node.Name] = int32(i)
			}
			before := make([]cycleState, 0, len(tc.steps)+1) // before[i]: the state before step i
			marks := map[int]int{}
			for i, step := range tc.steps {
				before = append(before, observe(&c))
				switch {
				case step.mark:
					marks[i] = c.st.mark()
				case step.place != "":
					p, ok := pods[step.place]
					if !ok {
						t.Fatalf("no pod %s among %v", step.place, pods)
					}
					c.st.place(p, nodes[step.node])
				case step.evict != "":
					c.st.evict(wls[step.evict], wls["waiting"], RulePreemption)
				case step.restore != "":
					c.st.restore(wls[step.restore])
				case step.rollbackTo != nil:
					c.st.rollback(marks[*step.rollbackTo])
				case step.commitTo != nil:
					var kinds []opKind
					for _, o := range c.st.commit(marks[*step.commitTo]) {
						kinds = append(kinds, o.kind)
					}
					if diff := cmp.Diff(step.wantCommitted, kinds); diff != "" {
						t.Errorf("step %d committed (-want +got):\n%s", i, diff)
					}
				}
			}
			after := observe(&c)
			if tc.wantLike != nil {
				if diff := cmp.Diff(before[*tc.wantLike], after); diff != "" {
					t.Errorf("after the last step the cycle differs from before step %d (-then +now):\n%s", *tc.wantLike, diff)
				}
				return
			}
			if cmp.Equal(before[0], after) {
				t.Errorf("the commit kept nothing: the cycle is as loaded")
			}
		})
	}
}
