package scheduler

// A statement records every change an attempt makes to the simulated cluster so that the
// attempt can be rolled back exactly, or committed, as KAI's Statement does. Marks nest: an
// attempt marks, tries, and either rolls back to its mark or commits what came after it.
type statement struct {
	c   *cycle
	ops []op
}

type opKind uint8

const (
	opPlace   opKind = iota // a pod put on a node
	opEvict                 // a running workload taken off its nodes
	opRestore               // an evicted workload given back (pruning, S16)
)

type op struct {
	kind opKind
	rule Rule
	id   int32 // the pod for opPlace, the workload otherwise
	node int32 // opPlace: the node
	by   int32 // opEvict: the preemptor
}

func (s *statement) mark() int { return len(s.ops) }

func (s *statement) place(pod, node int32) {
	s.ops = append(s.ops, op{kind: opPlace, id: pod, node: node})
	s.c.setPlaced(pod, node, true)
}

func (s *statement) evict(wl, by int32, rule Rule) {
	s.ops = append(s.ops, op{kind: opEvict, id: wl, by: by, rule: rule})
	s.c.setEvicted(wl, true)
}

func (s *statement) restore(wl int32) {
	s.ops = append(s.ops, op{kind: opRestore, id: wl})
	s.c.setEvicted(wl, false)
}

// rollback undoes every change made since the mark, newest first.
func (s *statement) rollback(mark int) {
	for i := len(s.ops) - 1; i >= mark; i-- {
		o := &s.ops[i]
		switch o.kind {
		case opPlace:
			s.c.setPlaced(o.id, o.node, false)
		case opEvict:
			s.c.setEvicted(o.id, false)
		case opRestore:
			s.c.setEvicted(o.id, true)
		}
	}
	s.ops = s.ops[:mark]
}

// commit keeps the changes made since the mark and returns them; the caller records them
// before the next change, as the slice is reused.
func (s *statement) commit(mark int) []op {
	done := s.ops[mark:]
	s.ops = s.ops[:mark]
	return done
}

func (c *cycle) setPlaced(pod, node int32, on bool) {
	ps := &c.pods[pod]
	pool := c.nodes[node].pool
	c.adjustNode(node, ps.req, !on)
	if on {
		ps.node = node
		c.account(ps.wl, pool, ps.req.GPUs)
	} else {
		ps.node = -1
		c.account(ps.wl, pool, -ps.req.GPUs)
	}
}

func (c *cycle) setEvicted(wl int32, evicted bool) {
	ws := &c.wls[wl]
	ws.evicted = evicted
	for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
		ps := &c.pods[k]
		if !ps.bound || ps.terminating {
			continue
		}
		pool := c.nodes[ps.node].pool
		gpus := ps.req.GPUs
		if evicted {
			gpus = -gpus
		}
		c.adjustNode(ps.node, ps.req, evicted)
		c.account(wl, pool, gpus)
		c.addRunning(wl, pool, gpus)
	}
}

// indexedHeap is a binary min-heap of small integers whose positions are kept in pos, shared
// by all heaps over the same universe, so that an item's key can change in place (fix).
type indexedHeap struct {
	items []int32
	pos   func(int32) *int32
	less  func(a, b int32) bool
}

func (h *indexedHeap) len() int   { return len(h.items) }
func (h *indexedHeap) top() int32 { return h.items[0] }

func (h *indexedHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	*h.pos(h.items[i]) = int32(i)
	*h.pos(h.items[j]) = int32(j)
}

func (h *indexedHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *indexedHeap) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			m = r
		}
		if !h.less(h.items[m], h.items[i]) {
			return
		}
		h.swap(i, m)
		i = m
	}
}

func (h *indexedHeap) push(x int32) {
	h.items = append(h.items, x)
	*h.pos(x) = int32(len(h.items) - 1)
	h.up(len(h.items) - 1)
}

func (h *indexedHeap) remove(x int32) {
	i := int(*h.pos(x))
	last := len(h.items) - 1
	if i != last {
		h.swap(i, last)
	}
	h.items = h.items[:last]
	*h.pos(x) = -1
	if i != last {
		h.down(i)
		h.up(i)
	}
}

func (h *indexedHeap) fix(x int32) {
	i := int(*h.pos(x))
	h.down(i)
	h.up(i)
}
