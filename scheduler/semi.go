package scheduler

// S26: a semi-preemptible workload is split, for the cycle, into parts that the rest of the
// core already knows how to treat:
//
//   - its minimum (the gang size of S5: pods bound and not terminating first, in the order of
//     the workload's pods, then pending ones), non-preemptible: admitted as one unit within
//     the deserved quota and never a victim;
//   - its pending replicas beyond the minimum, preemptible and not a gang: placed one by one,
//     once the minimum is placed, on free GPUs only (they take nobody's place, so that an
//     elastic workload does not evict others to grow and then lose what it grew);
//   - each bound replica beyond the minimum, preemptible, a victim of its own: evicted one by
//     one (S16, S17) while the minimum keeps running.
//
// The parts follow one another in cycle.wls, the minimum first, so a part finds its minimum
// by walking back. A suspended workload is not split: it resumes whole, as non-preemptible.

// loadSemi adds a semi-preemptible workload's parts; base is its resolved state.
func (c *cycle) loadSemi(base wlState, nodeIdx map[string]int32) {
	w := base.w
	gang, _ := ResolveGangSize(w)
	onNode := func(p *Pod) bool {
		_, ok := nodeIdx[p.NodeName]
		return p.NodeName != "" && ok
	}
	minimum, pendingExtras, boundExtras := c.semiBuf[0][:0], c.semiBuf[1][:0], c.semiBuf[2][:0]
	for k := range w.Pods {
		if p := &w.Pods[k]; onNode(p) && !p.Terminating && len(minimum) < gang {
			minimum = append(minimum, int32(k))
		}
	}
	for k := range w.Pods {
		switch p := &w.Pods[k]; {
		case p.NodeName == "" && p.Terminating:
			// deleted before it was bound: it holds nothing
		case p.NodeName == "" && len(minimum) < gang:
			minimum = append(minimum, int32(k))
		case p.NodeName == "":
			pendingExtras = append(pendingExtras, int32(k))
		case onNode(p) && (p.Terminating || !containsPod(minimum, int32(k))):
			boundExtras = append(boundExtras, int32(k))
		}
	}
	c.semiBuf = [3][]int32{minimum, pendingExtras, boundExtras}
	c.hasSemi = true
	c.addPart(base, minimum, false, nodeIdx)
	if len(pendingExtras) > 0 {
		c.addPart(base, pendingExtras, true, nodeIdx)
	}
	for i := range boundExtras {
		c.addPart(base, boundExtras[i:i+1], true, nodeIdx)
	}
}

func containsPod(ks []int32, k int32) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func (c *cycle) addPart(ws wlState, pods []int32, extra bool, nodeIdx map[string]int32) {
	wi := int32(len(c.wls))
	ws.preemptible = extra
	ws.firstPod = int32(len(c.pods))
	c.wls = append(c.wls, ws)
	for _, k := range pods {
		c.loadPod(wi, &ws.w.Pods[k], nodeOf(nodeIdx, &ws.w.Pods[k]))
	}
	c.wls[wi].pods = int32(len(c.pods)) - c.wls[wi].firstPod
	for k := c.wls[wi].firstPod; k < int32(len(c.pods)); k++ {
		c.pods[k].extra = extra
	}
}

// isExtra reports whether a workload state holds replicas of a semi-preemptible workload
// beyond its minimum.
func (c *cycle) isExtra(ws *wlState) bool {
	return c.hasSemi && ws.pods > 0 && c.pods[ws.firstPod].extra
}

// minimumOf is the part holding the minimum of the workload whose part wi is.
func (c *cycle) minimumOf(wi int32) int32 {
	for wi > 0 && c.isExtra(&c.wls[wi]) {
		wi--
	}
	return wi
}

// extrasMayGo reports whether replicas beyond the minimum may be placed: the minimum is
// running, or was admitted in this cycle.
func (c *cycle) extrasMayGo(wi int32) bool {
	m := &c.wls[c.minimumOf(wi)]
	return m.pendingPods == 0 || m.outcome == admitted
}

// preemptibilityOf is what a workload is reported as.
func (c *cycle) preemptibilityOf(ws *wlState) Preemptibility {
	if c.resolutions[ws.res].semi {
		return SemiPreemptible
	}
	return preemptibility(ws.preemptible)
}

// extraPods names a part's bound pods, for an eviction of replicas beyond the minimum.
func (c *cycle) extraPods(ws *wlState) []PodRef {
	var refs []PodRef
	for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
		if ps := &c.pods[k]; ps.bound && !ps.terminating {
			refs = append(refs, PodRef{UID: ps.pod.UID, Namespace: ps.pod.Namespace, Name: ps.pod.Name})
		}
	}
	return refs
}

// addToEviction adds a replica to an eviction of the same workload's replicas for the same
// preemptor under the same rule, so that a plan evicts a workload's replicas in one entry.
func (c *cycle) addToEviction(v *wlState, preemptor string, r Rule) bool {
	for i := len(c.plan.Evictions) - 1; i >= 0; i-- {
		e := &c.plan.Evictions[i]
		if e.Preemptor != preemptor {
			return false
		}
		if e.Workload == v.w.UID && e.Rule == r && len(e.Pods) > 0 {
			e.Pods = append(e.Pods, c.extraPods(v)...)
			e.GPUs += v.boundGPUs
			return true
		}
	}
	return false
}

// joinMinimum adds the GPUs of waiting replicas beyond a minimum to the pending entry of
// their workload's minimum, which is just before them in the queue, and reports whether
// there was one: a workload waits once, with the reason of its minimum.
func (c *cycle) joinMinimum(wi int32) (gpus int64, ok bool) {
	ps := c.plan.Pending
	if len(ps) == 0 || ps[len(ps)-1].Workload != c.wls[wi].w.UID {
		return 0, false
	}
	for k := c.wls[wi].firstPod; k < c.wls[wi].firstPod+c.wls[wi].pods; k++ {
		if p := &c.pods[k]; !p.bound && !p.terminating && p.node < 0 {
			gpus += p.req.GPUs
		}
	}
	ps[len(ps)-1].RequestedGPUs += gpus
	return gpus, true
}

// heldBefore reports whether an earlier part of the same workload holds GPUs after the plan:
// then the running report lists the workload once, at that part (S26).
func (c *cycle) heldBefore(wi int32) bool {
	for i := c.minimumOf(wi); i < wi; i++ {
		if _, _, ok := c.held(&c.wls[i]); ok {
			return true
		}
	}
	return false
}

// mergeParts folds the running entries of a semi-preemptible workload's later parts into its
// first: GPUs add up, and it is borrowed when any part is. entryOf[i] is entry i's part.
func (c *cycle) mergeParts(entryOf []int32) {
	first := map[string]int{}
	out := c.plan.Running[:0]
	for i := range c.plan.Running {
		r := c.plan.Running[i]
		if !c.resolutions[c.wls[entryOf[i]].res].semi {
			out = append(out, r)
			continue
		}
		if at, ok := first[r.Workload]; ok {
			out[at].GPUs += r.GPUs
			out[at].Borrowed = out[at].Borrowed || r.Borrowed
			continue
		}
		first[r.Workload] = len(out)
		out = append(out, r)
	}
	c.plan.Running = out
}
