package scheduler

// Resolution (S7, S8) memoised for a cycle. Resolve reads a few strings of a workload and its
// project's policy, and in a large cluster thousands of workloads share the same few: a cycle
// resolves each combination once and looks the rest up.

// resolvePolicy is what Catalog.Resolve reads of a policy (S7).
type resolvePolicy struct {
	defaultPriority, minPriority, maxPriority string
	forbidChange, forbidPreemptibilityChange  bool
}

type policyClasses map[resolvePolicy]int32

func (m policyClasses) of(p Policy) int32 {
	k := resolvePolicy{p.DefaultPriority, p.MinPriority, p.MaxPriority, p.ForbidPriorityChange, p.ForbidPreemptibilityChange}
	class, ok := m[k]
	if !ok {
		class = int32(len(m))
		m[k] = class
	}
	return class
}

// resolveKey is everything Catalog.Resolve reads of a workload, bar its UID (which only
// names the warnings), and what it reads of its project's policy. Workloads of one controller
// share them, so a cycle resolves each combination once instead of once per workload.
// A source that a source before it overrides is left out (zero), as Resolve does not read it:
// a workload's own valid labels spare looking at its pod's labels.
type resolveKey struct {
	typ, group                  string
	ownerPrio, ownerPreemptible string // the workload's labels
	podPrio, podPreemptible     string // its first pod's labels
	podClass                    string // its first pod's spec.priorityClassName
	present                     uint8  // which of the four labels are set, even to ""
	policyClass                 int32
}

const (
	hasOwnerPrio uint8 = 1 << iota
	hasOwnerPreemptible
	hasPodPrio
	hasPodPreemptible
)

// hash is a cheap hash of the key: lengths and a few bytes of its strings. A map keyed by the
// whole struct hashes and compares all seven strings, which took most of what memoising
// saves; collisions are told apart by comparing keys.
func (k *resolveKey) hash() uint64 {
	h := uint64(k.policyClass)<<8 | uint64(k.present)
	h = mix(h, k.typ)
	h = mix(h, k.group)
	h = mix(h, k.ownerPrio)
	h = mix(h, k.ownerPreemptible)
	h = mix(h, k.podPrio)
	h = mix(h, k.podPreemptible)
	return mix(h, k.podClass)
}

func mix(h uint64, s string) uint64 {
	const prime = 0x100000001b3
	h = (h ^ uint64(len(s))) * prime
	if len(s) > 0 {
		h = (h ^ uint64(s[0]) ^ uint64(s[len(s)/2])<<8 ^ uint64(s[len(s)-1])<<16) * prime
	}
	return h
}

// resolved is a memoised Resolution: its warnings are those of whichever workload was
// resolved first, and are given the UID of each workload that shares them.
type resolved struct {
	key         resolveKey
	next        int32 // the next resolution whose key has the same hash, or -1
	prio        Priority
	alias       string // the KAI or Run:ai class name prio was read as, if any
	preemptible bool
	semi        bool // semi-preemptible (S26): preemptible is false, for its minimum
	// prioFrom and preemptFrom are where each came from: they hold no names, so the key,
	// which decides every step of Resolve, decides them too.
	prioFrom, preemptFrom From
	warnings              []Warning
}

// LabelLookups are the labels resolution reads of a workload and of its first pod, and
// which of them are set (even to ""), as Present bits in the order of the fields.
type LabelLookups struct {
	OwnerPriority, OwnerPreemptibility, PodPriority, PodPreemptibility string
	Present                                                            uint8
}

// PrepareLookups looks up once the labels every cycle's resolution reads (see Lookups). A
// scheduler that keeps workloads from cycle to cycle calls it when it builds one: in a large
// cluster these lookups were a fifth of a cycle.
func (w *Workload) PrepareLookups() {
	l := lookUpLabels(w)
	w.Lookups = &l
}

func lookUpLabels(w *Workload) LabelLookups {
	var l LabelLookups
	l.OwnerPriority = label(w.Labels, LabelPriority, hasOwnerPrio, &l.Present)
	l.OwnerPreemptibility = label(w.Labels, LabelPreemptibility, hasOwnerPreemptible, &l.Present)
	if len(w.Pods) > 0 && !w.isOwnPod() { // a bare pod's labels are the workload's (firstPodLabel)
		l.PodPriority = label(w.Pods[0].Labels, LabelPriority, hasPodPrio, &l.Present)
		l.PodPreemptibility = label(w.Pods[0].Labels, LabelPreemptibility, hasPodPreemptible, &l.Present)
	}
	return l
}

// label looks a label up, setting bit in present when it is there (even empty).
func label(labels map[string]string, key string, bit uint8, present *uint8) string {
	v, ok := labels[key]
	if ok {
		*present |= bit
	}
	return v
}

// priority is a workload's resolved priority.
func (c *cycle) priority(ws *wlState) Priority { return c.resolutions[ws.res].prio }

// resolveMemo is a memo of resolutions: resolutions are the distinct ones, byHash finds the
// first of those whose key has a given hash (see resolveKey), last is the latest found.
type resolveMemo struct {
	resolutions []resolved
	byHash      map[uint64]int32
	last        int32
}

// find is the resolution with key k (whose hash is h), -1 if there is none yet.
func (m *resolveMemo) find(k *resolveKey, h uint64) int32 {
	i, ok := m.byHash[h]
	for ok && m.resolutions[i].key != *k {
		i = m.resolutions[i].next
		ok = i >= 0
	}
	if !ok {
		return -1
	}
	return i
}

// add keeps r, whose key has hash h, and says where.
func (m *resolveMemo) add(h uint64, r resolved) int32 {
	next, collides := m.byHash[h]
	if !collides {
		next = -1
	}
	r.next = next
	i := int32(len(m.resolutions))
	m.resolutions = append(m.resolutions, r)
	if m.byHash == nil {
		m.byHash = make(map[uint64]int32)
	}
	m.byHash[h] = i
	return i
}

// merge adds the resolutions of o that m does not have, and says where each of o's is in m.
func (m *resolveMemo) merge(o *resolveMemo) []int32 {
	at := make([]int32, len(o.resolutions))
	for i := range o.resolutions {
		r := o.resolutions[i]
		h := r.key.hash()
		if at[i] = m.find(&r.key, h); at[i] < 0 {
			at[i] = m.add(h, r)
		}
	}
	return at
}

// resolveIn is Catalog.Resolve for a workload of project j (-1 for none), memoised in m: the
// index of its resolution there (S7, S8). It only reads the cycle, so two halves of the
// workloads may be resolved at once, each in its own memo.
func (c *cycle) resolveIn(m *resolveMemo, w *Workload, j int32) int32 {
	k := resolveKey{typ: w.Type, group: w.Group}
	if j >= 0 {
		k.policyClass = c.projects[j].policyClass
	}
	l := w.Lookups
	if l == nil {
		looked := lookUpLabels(w)
		l = &looked
	}
	// userPriority stops at the first source naming a dictionary entry or an alias of one; a
	// source it does not reach stays out of the key
	known := c.catalog.knownPriority
	ok := l.Present&hasOwnerPrio != 0
	if ok {
		k.ownerPrio, k.present = l.OwnerPriority, k.present|hasOwnerPrio
	}
	if (!ok || !known(l.OwnerPriority)) && len(w.Pods) > 0 {
		ok = l.Present&hasPodPrio != 0
		if ok {
			k.podPrio, k.present = l.PodPriority, k.present|hasPodPrio
		}
		if !ok || !known(l.PodPriority) {
			k.podClass = w.Pods[0].PriorityClassName
		}
	}
	// resolvePreemptibility stops at the first valid label, unless the policy ignores labels
	// (then it reads both, to warn about each)
	readsBoth := j >= 0 && c.projects[j].policy.ForbidPreemptibilityChange
	ok = l.Present&hasOwnerPreemptible != 0
	if ok {
		k.ownerPreemptible, k.present = l.OwnerPreemptibility, k.present|hasOwnerPreemptible
	}
	if (!ok || readsBoth || !validPreemptibility(l.OwnerPreemptibility)) && l.Present&hasPodPreemptible != 0 { // set only with a pod
		k.podPreemptible, k.present = l.PodPreemptibility, k.present|hasPodPreemptible
	}
	// workloads of one controller tend to come together: the latest key first
	if len(m.resolutions) > 0 && m.resolutions[m.last].key == k {
		return m.last
	}
	h := k.hash()
	i := m.find(&k, h)
	if i < 0 {
		var policy Policy
		if j >= 0 {
			policy = c.projects[j].policy
		}
		full := c.catalog.Resolve(w, policy)
		i = m.add(h, resolved{key: k, prio: full.Priority, alias: full.PriorityAlias, preemptible: full.Preemptibility == Preemptible,
			semi: full.Preemptibility == SemiPreemptible, prioFrom: full.PriorityFrom, preemptFrom: full.PreemptibilityFrom, warnings: full.Warnings})
	}
	m.last = i
	return i
}

// useResolution gives a loaded workload its resolution, the ith of the cycle's, and its warnings.
func (c *cycle) useResolution(ws *wlState, i int32) {
	r := &c.resolutions[i]
	ws.res, ws.prio, ws.preemptible = i, r.prio.Value, r.preemptible
	for _, wr := range r.warnings {
		wr.Workload = ws.w.UID
		c.plan.Warnings = append(c.plan.Warnings, wr)
	}
}
