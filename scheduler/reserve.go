package scheduler

import (
	"cmp"
	"slices"
)

// This file keeps capacity set aside for a workload across cycles (S19 over time). A cycle
// that places a workload on capacity it cannot take at once — a preemptor whose victims still
// hold their nodes, or a resumed workload whose controller has yet to make its pods — says so
// in Plan.Reservations; the caller gives those back in later snapshots (Snapshot.Reservations)
// until the workload's pods are bound. Meanwhile no one else is placed there: without it, the
// free part of a preemptor's place went to the next workload in line while its victims
// terminated, and the preemptor, its victims gone, no longer fitted and evicted that workload
// in turn (the demo's thrash), and a resumed Job lost its place to whatever came in the
// moments before its pods did.
//
// A reservation holds its nodes' resources and counts in its project's and department's
// allocation, as placed pods do. What the preemptor's victims still hold on a node is not held
// twice. The workload itself gets its reservation back just before its own attempt, as the
// first of the cycle (admit's nominated workloads); until then, and while it waits for its
// victims or its pods, nothing else may use it.

// heldReservation is a reservation a cycle holds.
type heldReservation struct {
	wl            int32 // -1: the workload is not in the snapshot (a resumed Job without pods yet)
	project, dept int32
	preemptible   bool
	pods          []heldPod
	released      bool
}

type heldPod struct {
	node int32
	res  Resources // held on the node
	gpus int64     // counted in the quota
}

// loadReservations holds the snapshot's reservations (after the workloads are loaded, before
// the nodes are bucketed by what they have free).
func (c *cycle) loadReservations(s *Snapshot, nodeIdx map[string]int32) {
	c.reservations, c.reservationOf = c.reservations[:0], nil
	if len(s.Reservations) == 0 {
		return
	}
	reserved := make(map[string]int32, len(s.Reservations))
	for i := range s.Reservations {
		reserved[s.Reservations[i].Workload] = -1
	}
	c.findWorkloads(reserved)
	victims := map[string][]int32{} // by the preemptor's UID
	for wi := range c.wls {
		if ws := &c.wls[wi]; ws.terminating && ws.w.PreemptedBy != "" {
			victims[ws.w.PreemptedBy] = append(victims[ws.w.PreemptedBy], int32(wi))
		}
	}
	c.reservationOf = map[int32]int32{}
	for i := range s.Reservations {
		r := &s.Reservations[i]
		wi := reserved[r.Workload]
		present := wi >= 0
		if present && c.wls[wi].pendingPods == 0 {
			continue // all its pods are bound: the reservation has done its work
		}
		j, ok := c.projectIndex[r.Project]
		if !ok {
			continue
		}
		h := heldReservation{wl: -1, project: j, dept: c.projects[j].dept, preemptible: !r.NonPreemptible}
		if present {
			h.wl = wi
		}
		stillHeld := c.victimsHold(victims[r.Workload])
		for _, p := range r.Pods {
			n, ok := nodeIdx[p.Node]
			if !ok {
				continue
			}
			// The quota counts all of it (its victims' terminating pods count no more);
			// the node only what its victims do not still hold there.
			c.accountTo(j, h.dept, h.preemptible, c.nodes[n].pool, p.Requests.GPUs)
			amount := p.Requests
			if v, ok := stillHeld[n]; ok {
				taken := Resources{min(amount.MilliCPU, v.MilliCPU), min(amount.Memory, v.Memory), min(amount.GPUs, v.GPUs), min(amount.Pods, v.Pods)}
				stillHeld[n], amount = v.sub(taken), amount.sub(taken)
			}
			c.nodes[n].free = c.nodes[n].free.sub(amount)
			h.pods = append(h.pods, heldPod{node: n, res: amount, gpus: p.Requests.GPUs})
		}
		if present {
			c.reservationOf[wi] = int32(len(c.reservations))
		}
		c.reservations = append(c.reservations, h)
	}
}

// victimsHold is what the terminating pods of the given victims hold, by node.
func (c *cycle) victimsHold(victims []int32) map[int32]Resources {
	if len(victims) == 0 {
		return nil
	}
	out := map[int32]Resources{}
	for _, v := range victims {
		ws := &c.wls[v]
		for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
			if ps := &c.pods[k]; ps.bound && ps.terminating {
				out[ps.node] = out[ps.node].Add(ps.req)
			}
		}
	}
	return out
}

// giveBack gives a workload its reservation back, just before its attempt: the capacity is
// free again, for it first.
func (c *cycle) giveBack(wi int32) {
	i, ok := c.reservationOf[wi]
	if !ok || c.reservations[i].released {
		return
	}
	h := &c.reservations[i]
	h.released = true
	for _, p := range h.pods {
		if p.res != (Resources{}) {
			c.adjustNode(p.node, p.res, true)
		}
		c.accountTo(h.project, h.dept, h.preemptible, c.nodes[p.node].pool, -p.gpus)
	}
}

// reservationsOut writes into the plan what later cycles are to hold: where each workload
// placed behind evictions, and each workload resumed, goes.
func (c *cycle) reservationsOut() {
	add := func(wi int32, only func(*podState) bool) {
		ws := &c.wls[wi]
		r := Reservation{Workload: ws.w.UID, Project: c.projects[ws.project].name, NonPreemptible: !ws.preemptible}
		for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
			if ps := &c.pods[k]; ps.node >= 0 && !ps.bound && only(ps) {
				r.Pods = append(r.Pods, ReservedPod{Node: c.nodes[ps.node].node.Name, Requests: ps.req})
			}
		}
		if len(r.Pods) > 0 {
			c.plan.Reservations = append(c.plan.Reservations, r)
		}
	}
	for wi := range c.wls {
		ws := &c.wls[wi]
		switch {
		case ws.pend < 0 || ws.project < 0 || c.isExtra(ws):
		case ws.outcome == admitted && ws.suspended:
			add(int32(wi), func(*podState) bool { return true })
		default:
			// behind its evictions, all of it or (pod by pod) the pods placed so far
			add(int32(wi), func(ps *podState) bool { return ps.reserved })
		}
	}
	slices.SortFunc(c.plan.Reservations, func(a, b Reservation) int { return cmp.Compare(a.Workload, b.Workload) })
}
