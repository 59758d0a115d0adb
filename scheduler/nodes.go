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
}

func (p *poolState) bucketOf(free int64) int {
	return int(min(max(free, 0), int64(len(p.buckets)-1)))
}

func (p *poolState) setBit(g, pos int) {
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
		words := p.buckets[g]
		if p.bucketLen[g] == 0 {
			words = nil
		}
		for wi := int(p.firstWord[g]); wi < len(words); wi++ {
			word := words[wi]
			if word == 0 && wi == int(p.firstWord[g]) {
				p.firstWord[g]++ // still a lower bound: nothing before it is set
				continue
			}
			for word != 0 {
				b := bits.TrailingZeros64(word)
				word &= word - 1
				n := p.nodes[wi<<6|b]
				if c.nodes[n].free.covers(ps.req) && c.eligible(n, ps) {
					return n
				}
			}
		}
		if g == last {
			return -1
		}
	}
}

// adjustNode changes a node's free resources, keeping its pool's buckets and totals right.
func (c *cycle) adjustNode(n int32, delta Resources, add bool) {
	ns := &c.nodes[n]
	before := ns.free.GPUs
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
	if b0, b1 := p.bucketOf(before), p.bucketOf(ns.free.GPUs); b0 != b1 {
		p.clearBit(b0, int(ns.pos))
		p.setBit(b1, int(ns.pos))
	}
}
