package web

import (
	"cmp"
	"maps"
	"slices"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
)

// reasonProjectsShown bounds the projects named beside one waiting reason; the rest are
// counted ("and 3 more"), and the reason's own link lists them all.
const reasonProjectsShown = 5

// overviewInput is what the Overview is made of, as the handler read it: the node pools and
// projects the caller may read with their live status, and the workload counts in its scope.
type overviewInput struct {
	Connected    bool
	Pools        []views.NodePool
	Projects     []views.Project
	MoreProjects bool
	Counts       store.WorkloadCounts
}

// overviewFigures is every figure of the Overview. It is the one place the Overview counts, and
// pure, so what it counts is tested without a database.
func overviewFigures(in overviewInput) views.OverviewLive {
	m := views.OverviewLive{Connected: in.Connected, Pools: in.Pools, MoreProjects: in.MoreProjects,
		Running: in.Counts.Phases["Running"], Preemptions: in.Counts.Events["Preempted"], Reclaims: in.Counts.Events["Reclaimed"]}
	for _, p := range in.Pools {
		m.Nodes += p.Status.Nodes
		m.ReadyNodes += p.Status.ReadyNodes
		m.GPUs += p.Status.GPUs
		m.AllocatedGPUs += p.Status.AllocatedGPUs
	}
	m.FreeGPUs = max(m.GPUs-m.AllocatedGPUs, 0)
	for _, p := range in.Projects {
		bar := views.ProjectBar{ID: p.ID, Name: p.Name, Allocated: p.Status.Allocated, Borrowed: p.Status.Borrowed,
			NonPreemptible: p.Status.AllocatedNonPreemptible}
		for _, q := range p.Resources {
			bar.Deserved += q.GPU.Deserved
		}
		m.Projects = append(m.Projects, bar)
	}
	m.Waiting, m.WaitingReasons = waitingFigures(in.Counts.Waiting)
	return m
}

// waitingFigures counts the waiting workloads — pending, preempted and waiting to come back,
// suspended until admitted (store.WaitingSQL decides which) — by phase and by reason, each
// reason with the projects whose work waits for it. Reasons come most common first, then by
// code; a reason's projects most waiting first, then by name.
func waitingFigures(counts []store.WaitingCount) (views.WaitingCounts, []views.WaitingReason) {
	var total views.WaitingCounts
	byReason := map[string]map[string]int{}
	for _, c := range counts {
		if c.Count <= 0 {
			continue
		}
		total.Total += c.Count
		switch c.Phase {
		case "Preempted":
			total.Preempted += c.Count
		case "Suspended":
			total.Suspended += c.Count
		default:
			total.Pending += c.Count
		}
		if byReason[c.Reason] == nil {
			byReason[c.Reason] = map[string]int{}
		}
		byReason[c.Reason][c.Project] += c.Count
	}
	reasons := []views.WaitingReason{}
	for reason, projects := range byReason {
		r := views.WaitingReason{Reason: reason}
		for _, name := range slices.Sorted(maps.Keys(projects)) {
			r.Count += projects[name]
			r.Projects = append(r.Projects, views.ProjectCount{Project: name, Count: projects[name]})
		}
		slices.SortStableFunc(r.Projects, func(a, b views.ProjectCount) int { return cmp.Compare(b.Count, a.Count) })
		if len(r.Projects) > reasonProjectsShown {
			r.MoreProjects = len(r.Projects) - reasonProjectsShown
			r.Projects = r.Projects[:reasonProjectsShown]
		}
		reasons = append(reasons, r)
	}
	slices.SortFunc(reasons, func(a, b views.WaitingReason) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason))
	})
	return total, reasons
}
