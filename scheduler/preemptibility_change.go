package scheduler

import (
	"strconv"
	"strings"
)

// S14 holds at all times, not only at admission: a running workload made non-preemptible (or
// semi-preemptible, whose gang minimum is non-preemptible, S26) adds its GPUs to its project's
// non-preemptible work where it runs, and that must stay within the project's deserved quota
// there (and its department's). Otherwise the project would hold non-preemptible work on
// borrowed GPUs, which S17 could never reclaim. The API, the Workloads page's inline and bulk
// changes and their dry runs all ask CheckPreemptibilityChange.

// QuotaUse is a project's or department's deserved quota in a node pool and the GPUs its
// non-preemptible work holds there, as the last cycle left them (QueueStatus's Deserved and
// AllocatedNonPreemptible).
type QuotaUse struct {
	Name           string
	Deserved       int64
	NonPreemptible int64
}

// PreemptibilityChange is a change of a running workload's preemptibility with what S14
// checks it against.
type PreemptibilityChange struct {
	Workload string // its name, for the sentence
	From, To Preemptibility
	Pool     string // the node pool it runs in
	GPUs     int64  // the GPUs its bound pods hold there
	// MinimumGPUs are those of its gang minimum (S5's gang size), which are non-preemptible
	// when it is semi-preemptible (S26).
	MinimumGPUs int64
	Project     QuotaUse
	Department  *QuotaUse // nil: the project is in no department (nothing bounds it there)
}

// ChangeRefusal says why a preemptibility change is refused and what would work instead.
type ChangeRefusal struct {
	Unit     string // "project" or "department": whose deserved quota the change would pass
	Name     string
	Pool     string
	Would    int64 // its non-preemptible GPUs in Pool after the change
	Deserved int64
	Message  string
}

func (r *ChangeRefusal) Error() string { return r.Message }

// nonPreemptibleGPUs is what of a workload holding gpus counts as non-preemptible (S14, S26).
func nonPreemptibleGPUs(p Preemptibility, gpus, minimum int64) int64 {
	switch p {
	case NonPreemptible:
		return gpus
	case SemiPreemptible:
		return min(minimum, gpus)
	}
	return 0
}

// CheckPreemptibilityChange is S14 (with S26's minimum) for a change of a running workload's
// preemptibility: nil when its project's and department's non-preemptible work in its node
// pool stays within their deserved quotas, else the refusal. A change that adds no
// non-preemptible GPUs is always allowed, even where the quota is already passed (after the
// quota was lowered): it makes nothing worse.
func CheckPreemptibilityChange(c PreemptibilityChange) *ChangeRefusal {
	add := c.added(c.To)
	if add <= 0 {
		return nil
	}
	units := []struct {
		kind string
		use  *QuotaUse
	}{{"project", &c.Project}, {"department", c.Department}}
	for _, u := range units {
		if u.use == nil || u.use.NonPreemptible+add <= u.use.Deserved {
			continue
		}
		r := &ChangeRefusal{Unit: u.kind, Name: u.use.Name, Pool: c.Pool, Would: u.use.NonPreemptible + add, Deserved: u.use.Deserved}
		r.Message = c.sentence(r, u.use)
		return r
	}
	return nil
}

// added is how many non-preemptible GPUs the change to p adds.
func (c *PreemptibilityChange) added(p Preemptibility) int64 {
	return nonPreemptibleGPUs(p, c.GPUs, c.MinimumGPUs) - nonPreemptibleGPUs(c.From, c.GPUs, c.MinimumGPUs)
}

// fits says whether a change to p would pass S14 for the project and the department.
func (c *PreemptibilityChange) fits(p Preemptibility) bool {
	alt := *c
	alt.To = p
	return CheckPreemptibilityChange(alt) == nil
}

// sentence says why the change is refused and what would work: keeping it as it is, the
// semi-preemptible alternative when its minimum fits, waiting for the unit's other
// non-preemptible work there to finish when that would make room, or a larger deserved quota.
func (c *PreemptibilityChange) sentence(r *ChangeRefusal, use *QuotaUse) string {
	var b strings.Builder
	unit := r.Unit + " " + r.Name
	b.WriteString(c.Workload + " runs on " + gpus(c.GPUs) + " in node pool " + c.Pool + "; making it " + string(c.To) +
		" would give " + unit + " " + gpus(r.Would) + " of non-preemptible work there, beyond its deserved quota of " +
		strconv.FormatInt(r.Deserved, 10) + ", and work beyond the deserved quota must stay reclaimable (S14). ")
	options := []string{"keep it " + string(c.From)}
	if c.To == NonPreemptible && c.From != SemiPreemptible && c.MinimumGPUs < c.GPUs && c.fits(SemiPreemptible) {
		options = append(options, "make it semi-preemptible, as its minimum of "+gpus(c.MinimumGPUs)+" fits")
	}
	excess := r.Would - r.Deserved
	if other := use.NonPreemptible - nonPreemptibleGPUs(c.From, c.GPUs, c.MinimumGPUs); other >= excess {
		options = append(options, "change it once "+gpus(excess)+" of "+unit+"'s other non-preemptible work there "+
			map[bool]string{true: "has", false: "have"}[excess == 1]+" finished")
	}
	options = append(options, "ask an admin to raise "+unit+"'s deserved quota in "+c.Pool+" to at least "+strconv.FormatInt(r.Would, 10))
	b.WriteString(strings.ToUpper(options[0][:1]) + options[0][1:])
	for i, o := range options[1:] {
		if i == len(options)-2 {
			b.WriteString(", or " + o)
		} else {
			b.WriteString(", " + o)
		}
	}
	b.WriteString(".")
	return b.String()
}

// MinimumGPUs are the GPUs of a running workload's gang minimum (S5's gang size): its bound
// pods that are not terminating, in the order of its pods, as loadSemi takes them. Pods named
// in boundNow (a plan's binds of it) count as bound: the plan that starts a workload is what
// says it runs, before any snapshot shows its pods on nodes.
func MinimumGPUs(w *Workload, boundNow map[string]bool) int64 {
	gang, _ := ResolveGangSize(w)
	var gpus int64
	for i := range w.Pods {
		if p := &w.Pods[i]; (p.NodeName != "" || boundNow[p.UID]) && !p.Terminating && gang > 0 {
			gpus += p.Requests.GPUs
			gang--
		}
	}
	return gpus
}

// PreemptibilityStanding is what the plan says about a running workload for
// CheckPreemptibilityChange (To left empty): its node pool, its GPUs and those of its minimum,
// its current preemptibility and its project's and department's (named department) quota and
// non-preemptible use there. ok is false when the workload holds no GPUs in the plan: a
// waiting workload's preemptibility is checked when it is admitted.
func (p *Plan) PreemptibilityStanding(w *Workload, department string) (c PreemptibilityChange, ok bool) {
	if p == nil || w == nil {
		return c, false
	}
	for i := range p.Running {
		r := &p.Running[i]
		if r.Workload != w.UID {
			continue
		}
		boundNow := map[string]bool{}
		for _, b := range p.Binds {
			if b.Workload == w.UID {
				boundNow[b.Pod.UID] = true
			}
		}
		c = PreemptibilityChange{Workload: w.Name, From: r.Preemptibility, Pool: r.NodePool, GPUs: r.GPUs, MinimumGPUs: MinimumGPUs(w, boundNow)}
		for _, q := range p.Projects {
			if q.Name == r.Project && q.NodePool == r.NodePool {
				c.Project = QuotaUse{Name: q.Name, Deserved: q.Deserved, NonPreemptible: q.AllocatedNonPreemptible}
			}
		}
		for _, q := range p.Departments {
			if department != "" && q.Name == department && q.NodePool == r.NodePool {
				c.Department = &QuotaUse{Name: q.Name, Deserved: q.Deserved, NonPreemptible: q.AllocatedNonPreemptible}
			}
		}
		return c, r.GPUs > 0
	}
	return c, false
}
