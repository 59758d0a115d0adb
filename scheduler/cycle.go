package scheduler

import (
	"cmp"
)

// Plan runs one scheduling cycle over the snapshot and says what to do. It does not modify
// the snapshot; the same snapshot always gives the same plan. (A method, because Plan is
// also the name of its result.)
func (s *Snapshot) Plan() Plan { return s.plan(true) }

// plan is Plan; without report it leaves out phase 5 (Pending, Running and the summaries),
// which the start estimate's simulated cycles do not read and which is much of a cycle's cost
// when thousands wait.
func (s *Snapshot) plan(report bool) Plan {
	var c cycle
	c.st.c = &c
	c.scratch = scratches.Get().(*scratch)
	defer c.release()
	c.load(s) // phase 1
	// The ranking of what runs, phase 1's last step, is sorted beside phases 2 and 3: it
	// writes the projects' ranked lists and runningOrder, which they do not touch, and reads
	// nothing they write. Admission reads it. The plan is the same either way.
	ranked := make(chan struct{})
	go func() {
		defer close(ranked)
		c.rank()
	}()
	c.nominate() // phase 2
	c.order()    // phase 3
	<-ranked
	c.admit() // phase 4
	c.reservationsOut()
	if report {
		c.topologyOut()
		c.report() // phase 5 (it writes the binds out beside the running report)
	} else {
		c.bindsOut()
	}
	return c.plan
}

// share is a project's or department's quota and use of one node pool during a cycle.
type share struct {
	quota   Quota
	alloc   int64 // GPUs bound or set aside, terminating pods excluded
	allocNP int64 // the non-preemptible part of alloc
	// running is the GPUs of workloads running at the snapshot and not evicted: what
	// borrowing is measured on (S17).
	running int64
}

func (s *share) limitExceeded(gpus int64) bool {
	return s.quota.Limit >= 0 && s.alloc+gpus > s.quota.Limit
}

func (s *share) nonPreemptibleExceeded(gpus int64) bool {
	return s.allocNP+gpus > s.quota.Deserved
}

// fairKey orders projects (or departments) for S11: those below their deserved quota first,
// the most starved first; then by over-quota use per weight; weight 0 last.
type fairKey struct {
	class    int8
	num, den int64
	// used is past use under S28 (timefair.go), which breaks ties past deserved quota: the unit
	// that used the pool less goes first. Always 0 without S28 and below deserved quota.
	used float64
}

func makeFairKey(alloc, deserved, weight int64) fairKey {
	switch {
	case deserved > 0 && alloc < deserved:
		return fairKey{class: 0, num: alloc, den: deserved}
	case weight > 0:
		return fairKey{class: 1, num: alloc - deserved, den: weight}
	default:
		return fairKey{class: 2, num: alloc - deserved, den: 1}
	}
}

func (a fairKey) compare(b fairKey) int {
	if a.class != b.class {
		return cmp.Compare(a.class, b.class)
	}
	if d := cmp.Compare(a.num*b.den, b.num*a.den); d != 0 {
		return d
	}
	return cmp.Compare(a.used, b.used)
}

// group is what projects and departments share: quotas per pool and the sums S11 orders by.
type group struct {
	name    string
	shares  []share // by pool index
	heapPos int32
	// open and offset are its S25 priority policy: a fenced unit's queue priority is its offset
	open   bool
	offset int64
	// timeFair is, by pool, what S28 makes of its past use; nil when no pool has S28 on
	timeFair []timeShare
}

type projectState struct {
	group
	dept   int32
	arena  int32 // where it competes: its department's projects of its first pool
	policy Policy
	// policyClass numbers the distinct parts of policies that resolution reads (resolveKey)
	policyClass int32
	pools       []int32 // node pools to try, in order
	queue       []int32 // pending workloads, S10 order
	next        int     // queue[next] is the head
	// ranked[pool] lists the workloads running at the snapshot with pods in that pool, in
	// the S15 ranking: non-preemptible first, then by priority, then by start time.
	ranked [][]int32
}

type deptState struct {
	group
	unbounded bool // the stand-in department of projects that name none
}

// workload outcome during a cycle
const (
	waiting  uint8 = iota // still in its queue
	admitted              // every pod placed (or resumed)
	skipped               // not tried this cycle (reason already known)
	// reserved: placed in the simulation on capacity that evictions free; its pods are
	// bound in a later cycle, once the victims are gone.
	reservedBehindEvictions
)

// wlState is a workload during a cycle. Most workloads of a large cluster run and never wait,
// so what only a waiting one needs is in pendState: this stays one cache line (64 bytes).
type wlState struct {
	w              *Workload
	boundGPUs      int64 // of pods bound at the snapshot, not terminating
	start          int64 // StartedAt in Unix nanoseconds, kept here for sorting
	project, dept  int32 // -1 without a project
	firstPod, pods int32 // range into cycle.pods
	pendingPods    int32
	pend           int32 // its pendState in cycle.pend; -1 when it has no pending pods
	res            int32 // its resolution in cycle.resolutions
	prio           int32 // the value of its resolved priority
	preemptible    bool
	running        bool // has bound pods at the snapshot
	terminating    bool // has pods still terminating
	suspended      bool
	evicted        bool
	waitEvictions  bool // an earlier eviction for it is still terminating (S19)
	// evictionRecorded is set once its eviction is in the plan
	evictionRecorded bool
	outcome          uint8
}

// pendState is what a workload with pending pods needs besides its wlState.
type pendState struct {
	queued int64 // QueuedAt in Unix nanoseconds, kept here for sorting
	gang   int
	// preempted, nominated and topology are the workload's PreemptedBy != "", Nominated and
	// asksTopology, copied here at loading: every attempt reads them, and reading them from
	// the snapshot's workload is a cache miss per attempt (admission visits workloads in
	// queue order, which is random in memory).
	preempted, nominated, topology bool
	// foreseen: some of its pods are foreseen (foreseen_pods.go): it is not placed, but
	// keeps its room from the work it could evict
	foreseen       bool
	fail           failure
	nominatedNodes []int32
}

// failOf is the failure of a workload with pending pods.
func (c *cycle) failOf(ws *wlState) *failure { return &c.pend[ws.pend].fail }

type podState struct {
	pod         *Pod
	wl          int32
	node        int32 // bound at the snapshot or placed in this cycle; -1 otherwise
	req         Resources
	bound       bool // bound at the snapshot
	reserved    bool // placed on capacity that evictions free: bound in a later cycle
	terminating bool
	constrained bool
	extra       bool // a replica of a semi-preemptible workload beyond its minimum (S26)
}

// cycle is one run of Plan: the snapshot indexed by integers, and the state being simulated.
type cycle struct {
	snap     *Snapshot
	catalog  *Catalog
	pools    []poolState
	nodes    []nodeState
	depts    []deptState
	projects []projectState
	wls      []wlState
	pend     []pendState
	pods     []podState
	st       statement
	// arenas are where siblings compete (S11): the projects of one department whose first
	// node pool is one pool; poolHeaps order each pool's arenas, arenaOf finds them.
	arenas    []arena
	poolHeaps []indexedHeap
	arenaOf   []int32 // by dept*len(poolHeaps)+pool; -1 when none
	// projectQP and arenaQP are the S25 queue priorities of a project and of an arena
	projectQP, arenaQP func(int32) int64
	plan               Plan
	binds              []placedPod // decided binds, in order; see bindsOut
	// projectIndex finds projects by name while loading
	projectIndex map[string]int32
	// memo holds the distinct resolutions of the cycle's workloads, and resolutions is its
	// list once they are all loaded
	memo        resolveMemo
	resolutions []resolved
	// scratch slices reused across attempts
	unitBuf, victimBuf []int32
	victimRules        []Rule // the rule of each of victimBuf's victims
	candBuf            []candidate
	semiBuf            [3][]int32
	borrowers          [][]int32 // by pool: see borrowersIn
	borrowerWeight     []int64   // by pool, the borrowers' weights summed for S28; -1 until asked
	hasSemi            bool      // some workload is semi-preemptible (S26)
	// evictedOrder lists victims in the order of plan.Evictions
	evictedOrder []int32
	// runningOrder is every workload running at the snapshot, in the ranking (compareRank)
	runningOrder []rankItem
	// reclaimSpared and preemptSpared are the earliest time a victim that reclaim (S27) or
	// preemption (S16) spared for its project's minimum runtime becomes eligible, during one
	// attempt; 0 when none was spared.
	reclaimSpared, preemptSpared int64
	// uidSkip is the length of the prefix all UIDs share: rankItem.uid starts after it, so
	// that UIDs made of a common prefix and a name are told apart without comparing strings.
	uidSkip int
	// reservations are the snapshot's reservations this cycle holds, reservationOf those of
	// workloads in the snapshot by workload (reserve.go)
	reservations  []heldReservation
	reservationOf map[int32]int32
	// claims are, by pool, the waiting workloads that hold what they may evict off it for the
	// rest of the cycle (claim.go); nil until the first
	claims        []poolClaims
	claimedBy     []bool              // by project*pools+pool: see claimedPool
	inQuotaClaims map[int32]claimSpan // by claimant, into inQuotaList: see admittedClaimant
	inQuotaList   []inQuotaClaim
	// terminating and borrowed are, by pool, the GPUs of pods terminating at the snapshot and
	// those projects borrow; nil until asked (claim.go)
	terminating, borrowed []int64
	evictedGPUs           []int64 // by pool, of the workloads this plan evicts so far (noteEvicted)
	claimBuf              []int32
	// scratch is the memory the large arrays above are kept in from cycle to cycle
	scratch *scratch
	// topoWls are the workloads that ask for a topology (S29), domainSets the pools' domains
	// of each level asked for, made on first use (topology_place.go)
	topoWls    []int32
	domainSets map[domainKey]*domainSet
	domainList []*domainSet // the same, in the order they were made: adjustNode keeps their free GPUs
	triedBuf   []int32
	// messages are the waiting workloads' messages that depend on their failure alone, made
	// once a cycle each (messageKey); at most one per waiting workload
	messages map[messageKey]string
}

// failure is what blocked a workload's last attempt, with the numbers its message needs.
type failure struct {
	reason Reason
	stage  int8  // how far the attempt got; the furthest pool's failure is reported
	pool   int32 // -1 when no pool is concerned
	dept   bool  // the department's quota, not the project's, was the bound
	amount int64 // what it would use / ask for
	bound  int64 // the limit, deserved quota or free GPUs it met
	// head is the strict queue's blocked head (BehindStrictHead), or with held the workload
	// that claimed the pool (InsufficientCapacity; claim.go)
	head int32
	held bool
	// delay says that evictions were held back (S27) and until when (Unix nanoseconds)
	delay delayKind
	until int64
	// topo is what a failed required topology placement says (TopologyUnsatisfiable, S29)
	topo *topoMiss
}

// delayKind is what held back evictions for a waiting workload (S27).
type delayKind uint8

const (
	noDelay           delayKind = iota
	preemptionDelay             // its project's preemptionDelaySeconds has not passed
	reclaimRuntime              // borrowed work it could reclaim is younger than its reclaimMinRuntimeSeconds
	preemptionRuntime           // lower-priority work of its project is younger than the project's minRuntimeSeconds
)

// reasonStage is how far an attempt got when it failed for a reason: the further, the closer
// the workload came to starting.
func reasonStage(r Reason) int8 {
	switch r {
	case NoMatchingNodes:
		return 1
	case OverLimit:
		return 2
	case NonPreemptibleOverQuota:
		return 3
	case InsufficientCapacity:
		return 4
	case TopologyUnsatisfiable:
		return 5 // the pool has the GPUs, not inside one domain
	}
	return 0
}

// note keeps the failure that got furthest; among equals, the first (the earlier pool).
func (f *failure) note(n failure) {
	n.stage = reasonStage(n.reason)
	if f.reason == "" || n.stage > f.stage {
		*f = n
	}
}
