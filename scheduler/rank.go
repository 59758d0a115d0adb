package scheduler

import (
	"cmp"
	"math"
	"slices"
)

// The ranking of each project's running work (S15, docs/rules.md): non-preemptible
// first, then higher priority, then earlier start. Preemption and reclaim take their victims
// from its end, and the running report lists workloads in its order.

// rank is phase 1's last step: the ranking of each project's running work (S15), which
// preemption and reclaim read. It is one order over all running workloads, so it is sorted
// once: appending in that order leaves every project's lists sorted, and the report reuses it.
func (c *cycle) rank() {
	c.uidSkip = c.commonUIDPrefix()
	for wi := range c.wls {
		if c.wls[wi].running {
			c.runningOrder = append(c.runningOrder, c.rankItemOf(int32(wi)))
		}
	}
	slices.SortFunc(c.runningOrder, c.compareRank())
	for _, r := range c.runningOrder {
		c.rankRunning(r.wi)
	}
}

// rankRunning lists a running workload under each pool it has pods in.
func (c *cycle) rankRunning(wi int32) {
	ws := &c.wls[wi]
	if ws.project < 0 {
		return
	}
	ranked := c.projects[ws.project].ranked
	for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
		ps := &c.pods[k]
		if !ps.bound || ps.terminating {
			continue
		}
		pool := c.nodes[ps.node].pool
		if pool < 0 {
			continue
		}
		if l := ranked[pool]; len(l) == 0 || l[len(l)-1] != wi {
			ranked[pool] = append(l, wi)
		}
	}
}

// rankItem is a workload with what the ranking orders it by, packed so that sorting compares
// integers and reaches into the workload only to break ties by UID.
type rankItem struct {
	key   uint64 // non-preemptible first, then higher priority, then running at the snapshot first
	start int64
	uid   uint64 // 8 bytes of the UID after what all share (uidSkip), big-endian: most UIDs differ there
	wi    int32
}

// commonUIDPrefix is the length of the prefix every workload's UID shares. Random UIDs share
// none, which the first few tell.
func (c *cycle) commonUIDPrefix() int {
	if len(c.wls) == 0 {
		return 0
	}
	p := c.wls[0].w.UID
	for wi := 1; wi < len(c.wls) && len(p) > 0; wi++ {
		u := c.wls[wi].w.UID
		n := 0
		for n < len(p) && n < len(u) && p[n] == u[n] {
			n++
		}
		p = p[:n]
	}
	return len(p)
}

// uidPrefix orders as the UIDs do wherever two prefixes differ: a UID shorter than 8 bytes is
// padded with zeros, which sort first.
func uidPrefix(uid string) uint64 {
	var p uint64
	for i := range 8 {
		p <<= 8
		if i < len(uid) {
			p |= uint64(uid[i])
		}
	}
	return p
}

func (c *cycle) rankItemOf(wi int32) rankItem {
	ws := &c.wls[wi]
	var key uint64
	if ws.preemptible {
		key = 1 << 34
	}
	key |= uint64(math.MaxInt32-int64(ws.prio)) << 1 // higher priority first; fits in 32 bits
	if !ws.running {
		key |= 1 // what starts in this cycle starts last
	}
	return rankItem{key: key, start: ws.start, uid: uidPrefix(ws.w.UID[c.uidSkip:]), wi: wi}
}

// compareRank is the ranking of a project's running work (S15, docs/rules.md):
// non-preemptible first, then higher priority, then earlier start. It is a function value, not
// a method, so that sorting calls it directly with everything but the UID tie-break inlined.
func (c *cycle) compareRank() func(a, b rankItem) int {
	return func(a, b rankItem) int {
		switch {
		case a.key != b.key:
			return sign(a.key < b.key)
		case a.start != b.start:
			return sign(a.start < b.start)
		case a.uid != b.uid:
			return sign(a.uid < b.uid)
		}
		return c.compareUIDs(a.wi, b.wi)
	}
}

// sign is -1 for less, else 1: a comparison of values known to differ.
func sign(less bool) int {
	if less {
		return -1
	}
	return 1
}

func (c *cycle) compareUIDs(a, b int32) int {
	if d := cmp.Compare(c.wls[a].w.UID, c.wls[b].w.UID); d != 0 || !c.hasSemi {
		return d
	}
	// replicas of one semi-preemptible workload (S26): by their pods
	return cmp.Compare(c.pods[c.wls[a].firstPod].pod.UID, c.pods[c.wls[b].firstPod].pod.UID)
}
