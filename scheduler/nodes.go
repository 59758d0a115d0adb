package scheduler

import (
	"math/bits"
	"strconv"
)

// nodeState is a node during a cycle. Nodes are indexed by name order.
type nodeState struct {
	node      *Node
	pool      int32 // -1: in no pool
	pos       int32 // position among its pool's nodes
	usable    bool  // ready and schedulable
	untainted bool  // no taint that keeps untolerating pods away
	free      Resources
}

// poolState is a node pool during a cycle. Its nodes are kept in bitsets by free GPU count so
// that binpack and spread find the fullest or emptiest fitting node without sorting, and so
// that undoing a placement restores exactly the same order (a rolled-back attempt leaves no trace).
type poolState struct {
	pool    *NodePool
	spread  bool
	nodes   []int32    // node indices, by name
	buckets [][]uint64 // buckets[g] has bit i set when nodes[i] is usable with g free GPUs
	// bucketLen[g] counts the bits set in buckets[g], and no word of buckets[g] before
	// firstWord[g] has one: at thousands of nodes, a search would otherwise read every word
	// of every empty or nearly empty bucket for each pod it places.
	bucketLen, firstWord []int32
	freeGPUs             int64 // free GPUs on usable nodes (a bound: some may be behind taints)
	// shapes are the distinct allocatable amounts of usable untainted nodes: a pod without
	// constraints matches some node iff one of them covers it.
	shapes []Resources
	// marks[g] are how far into bucket g the nodes are too full for a request (see skipMark)
	marks [][]skipMark
	// room[g][w] is at least the most of each resource free on a node of bucket g in word w
	// of the bitsets: a search passes over a word whose room does not cover its request
	// without reading its nodes. A node that enters the bucket or gains free raises it; a
	// search that reads a whole word lowers it to what it read.
	room [][]Resources
}

// skipMark says that every node of a bucket before position pos has too little free for req
// (CPU, memory or pod slots, as the bucket has enough GPUs), and so for any larger request.
// Pods that ask for no GPUs go to the fullest nodes first, whose CPU or pod slots run out long
// before their GPUs: without marks each such pod read hundreds of full nodes before finding
// room. A node that gains free resources or enters the bucket moves the marks back to it, so
// a choice is the same as reading every node.
type skipMark struct {
	req Resources
	pos int32
}

// maxMarks bounds the request sizes remembered per bucket; a request beyond them starts from
// the nearest smaller one's mark.
const maxMarks = 16

// readEveryNode turns marks and room off, so that a search reads every node: what
// TestSearchShortcutsChooseAsAFullSearch compares with.
var readEveryNode = false

// markFor is where a search of bucket g for req may start, and the mark to move forward as it
// finds nodes too full (nil when none is kept for req).
func (p *poolState) markFor(g int, req Resources) (int, *skipMark) {
	if readEveryNode {
		return 0, nil
	}
	marks := p.marks[g]
	start := 0
	for i := range marks {
		m := &marks[i]
		if m.req == req {
			return int(m.pos), m
		}
		if req.covers(m.req) { // too full for less is too full for req
			start = max(start, int(m.pos))
		}
	}
	if len(marks) == maxMarks {
		return start, nil
	}
	p.marks[g] = append(marks, skipMark{req: req, pos: int32(start)})
	return start, &p.marks[g][len(marks)]
}

// lowerMarks moves bucket g's marks back to pos, where a node now has free: those of the
// requests it has room for.
func (p *poolState) lowerMarks(g, pos int, free Resources) {
	for i := range p.marks[g] {
		if m := &p.marks[g][i]; int(m.pos) > pos && free.covers(m.req) {
			m.pos = int32(pos)
		}
	}
}

func (p *poolState) bucketOf(free int64) int {
	return int(min(max(free, 0), int64(len(p.buckets)-1)))
}

// gained notes that the node at pos in bucket g has free resources, more than it had there.
func (p *poolState) gained(g, pos int, free Resources) {
	p.lowerMarks(g, pos, free)
	r := &p.room[g][pos>>6]
	*r = r.most(free)
}

// setBit puts the node at pos, with free resources, in bucket g.
func (p *poolState) setBit(g, pos int, free Resources) {
	p.gained(g, pos, free)
	p.buckets[g][pos>>6] |= 1 << (pos & 63)
	p.bucketLen[g]++
	p.firstWord[g] = min(p.firstWord[g], int32(pos>>6))
}

func (p *poolState) clearBit(g, pos int) {
	p.buckets[g][pos>>6] &^= 1 << (pos & 63)
	p.bucketLen[g]--
}

// blocking reports whether a taint keeps pods that do not tolerate it away.
func blocking(t Taint) bool { return t.Effect == "NoSchedule" || t.Effect == "NoExecute" }

func tolerates(tols []Toleration, t Taint) bool {
	for _, tol := range tols {
		if tol.Effect != "" && tol.Effect != t.Effect {
			continue
		}
		if tol.Operator == "Exists" {
			if tol.Key == "" || tol.Key == t.Key {
				return true
			}
			continue
		}
		if tol.Key == t.Key && tol.Value == t.Value {
			return true
		}
	}
	return false
}

func requirementMatches(labels map[string]string, r NodeSelectorRequirement) bool {
	v, ok := labels[r.Key]
	switch r.Operator {
	case "In":
		if !ok {
			return false
		}
		for _, x := range r.Values {
			if x == v {
				return true
			}
		}
		return false
	case "NotIn":
		for _, x := range r.Values {
			if ok && x == v {
				return false
			}
		}
		return true
	case "Exists":
		return ok
	case "DoesNotExist":
		return !ok
	case "Gt", "Lt":
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == "Gt" {
			return have > want
		}
		return have < want
	}
	return false
}

// constrained reports whether a pod carries anything beyond its requests that decides where it may go.
func constrained(p *Pod) bool {
	return len(p.NodeSelector) > 0 || len(p.RequiredAffinity) > 0 || len(p.Tolerations) > 0
}

// allows reports whether the node's labels and taints let the pod in (S21); capacity aside.
func allows(n *Node, p *Pod) bool {
	for k, v := range p.NodeSelector {
		if n.Labels[k] != v {
			return false
		}
	}
	if len(p.RequiredAffinity) > 0 {
		any := false
		for _, term := range p.RequiredAffinity {
			all := true
			for _, r := range term.MatchExpressions {
				if !requirementMatches(n.Labels, r) {
					all = false
					break
				}
			}
			if all {
				any = true
				break
			}
		}
		if !any {
			return false
		}
	}
	for _, t := range n.Taints {
		if blocking(t) && !tolerates(p.Tolerations, t) {
			return false
		}
	}
	return true
}

// eligible is allows with the cheap answer for pods without constraints.
func (c *cycle) eligible(n int32, ps *podState) bool {
	if !ps.constrained {
		return c.nodes[n].untainted
	}
	return allows(c.nodes[n].node, ps.pod)
}

// canEverHost reports whether some usable node of the pool could host the pod if it were
// empty: false means NoMatchingNodes.
func (c *cycle) canEverHost(pool int32, ps *podState) bool {
	p := &c.pools[pool]
	if !ps.constrained {
		for _, s := range p.shapes {
			if s.covers(ps.req) {
				return true
			}
		}
		return false
	}
	for _, n := range p.nodes {
		ns := &c.nodes[n]
		if ns.usable && ns.node.Allocatable.covers(ps.req) && allows(ns.node, ps.pod) {
			return true
		}
	}
	return false
}

// chooseNode picks the node for a pod in a pool: the fullest that fits for binpack, the
// emptiest for spread; among equals the first by name. -1 when none fits.
func (c *cycle) chooseNode(pool int32, ps *podState) int32 {
	p := &c.pools[pool]
	need := ps.req.GPUs
	if need >= int64(len(p.buckets)) {
		return -1
	}
	first, last, step := int(max(need, 0)), len(p.buckets)-1, 1
	if p.spread {
		first, last, step = last, first, -1
	}
	for g := first; ; g += step {
		if p.bucketLen[g] > 0 {
			if n := c.searchBucket(p, g, ps); n >= 0 {
				return n
			}
		}
		if g == last {
			return -1
		}
	}
}

// searchBucket is the first node by position in bucket g with room for the pod, -1 if none.
func (c *cycle) searchBucket(p *poolState, g int, ps *podState) int32 {
	words := p.buckets[g]
	for int(p.firstWord[g]) < len(words) && words[p.firstWord[g]] == 0 {
		p.firstWord[g]++ // still a lower bound: nothing before it is set
	}
	from, mark := p.markFor(g, ps.req)
	from = max(from, int(p.firstWord[g])<<6)
	room := p.room[g]
	for wi := from >> 6; wi < len(words); wi++ {
		word, whole := words[wi], true
		if wi == from>>6 {
			word &= ^uint64(0) << (from & 63)
			whole = from&63 == 0
		}
		if word == 0 {
			continue
		}
		if !room[wi].covers(ps.req) && !readEveryNode {
			if mark != nil {
				mark.pos = int32(wi+1) << 6 // no node of the word has room either
			}
			continue
		}
		var most Resources // the word's room, once every node of it is read
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &= word - 1
			pos := wi<<6 | b
			n := p.nodes[pos]
			free := c.nodes[n].free
			most = most.most(free)
			if !free.covers(ps.req) {
				if mark != nil {
					mark.pos = int32(pos + 1) // every node before it is too full too
				}
				continue
			}
			mark = nil // this one has room, so the mark stops here
			if c.eligible(n, ps) {
				return n
			}
		}
		if whole {
			room[wi] = most
		}
	}
	return -1
}

// adjustNode changes a node's free resources, keeping its pool's buckets and totals right.
func (c *cycle) adjustNode(n int32, delta Resources, add bool) {
	ns := &c.nodes[n]
	was := ns.free
	before := was.GPUs
	if add {
		ns.free = ns.free.Add(delta)
	} else {
		ns.free = ns.free.sub(delta)
	}
	if ns.pool < 0 || !ns.usable {
		return
	}
	p := &c.pools[ns.pool]
	p.freeGPUs += max(ns.free.GPUs, 0) - max(before, 0)
	if c.domainList != nil { // S29: domains' free GPUs, once a search has made them
		c.domainsGained(ns, max(ns.free.GPUs, 0)-max(before, 0))
	}
	if b0, b1 := p.bucketOf(before), p.bucketOf(ns.free.GPUs); b0 != b1 {
		p.clearBit(b0, int(ns.pos))
		p.setBit(b1, int(ns.pos), ns.free)
	} else if !was.covers(ns.free) {
		p.gained(b1, int(ns.pos), ns.free)
	}
}
