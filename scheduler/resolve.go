package scheduler

import (
	"strconv"
	"strings"
)

// Labels and annotations the resolution reads (S5, S7, S8).
const (
	LabelPriority        = "priorityClassName"
	LabelPreemptibility  = "kai.scheduler/preemptibility"
	AnnotationMinMembers = "arbiter.dev/min-members"
	// AnnotationSubmitter names who submitted a workload through Arbiter's submission API (the
	// caller's subject); an annotation, as subjects ("iss sub", e-mail addresses) are not label
	// values. Records keep it as their submitter; researchers may change their own workloads.
	AnnotationSubmitter = "arbiter.dev/submitted-by"
)

// ClusterDefaultPriority is the priority of a workload nothing else gives one (S7 step 7).
const ClusterDefaultPriority = "low"

// fallbackPriority stands in for ClusterDefaultPriority if the dictionary lacks it.
var fallbackPriority = Priority{Name: ClusterDefaultPriority, Value: 40}

// PreemptibleBelow is the priority value under which a workload is preemptible when nothing
// else says (S8 step 5).
const PreemptibleBelow = 100

// WarningCode names a problem found while resolving a workload; each becomes a Warning event.
type WarningCode string

const (
	InvalidPriority          WarningCode = "InvalidPriority"
	PriorityChangeNotAllowed WarningCode = "PriorityChangeNotAllowed"
	PriorityClamped          WarningCode = "PriorityClamped"
	InvalidPreemptibility    WarningCode = "InvalidPreemptibility"
	// PreemptibilityChangeNotAllowed: the project's policy forbids setting preemptibility, so a
	// label asking for one is ignored (S8).
	PreemptibilityChangeNotAllowed WarningCode = "PreemptibilityChangeNotAllowed"
	InvalidMinMembers              WarningCode = "InvalidMinMembers"
)

// Warning is something the user should fix about a workload's labels or the project policy.
type Warning struct {
	Workload string // UID
	Code     WarningCode
	Message  string
}

// Resolution is a workload's effective priority and preemptibility.
type Resolution struct {
	Priority Priority
	// PriorityAlias is the KAI or Run:ai priority class name the priority was read as (an
	// alias of a dictionary entry), "" when it was not.
	PriorityAlias  string
	Preemptibility Preemptibility
	// PriorityFrom and PreemptibilityFrom are where each value came from.
	PriorityFrom, PreemptibilityFrom From
	Warnings                         []Warning
}

// Catalog is the priority dictionary, categories and workload types, indexed for resolution.
// The API builds one to show and dry-run what the scheduler would decide.
type Catalog struct {
	priorities map[string]Priority
	aliases    map[string]alias // KAI's and Run:ai's class names whose entry is in the dictionary
	aliasNames string           // their names, for warnings
	categories map[string]Category
	types      map[string][]WorkloadType
}

// NewCatalog indexes the dictionary, categories and types.
func NewCatalog(priorities []Priority, categories []Category, types []WorkloadType) *Catalog {
	c := &Catalog{
		priorities: make(map[string]Priority, len(priorities)),
		categories: make(map[string]Category, len(categories)),
		types:      make(map[string][]WorkloadType, len(types)),
	}
	for _, p := range priorities {
		c.priorities[p.Name] = p
	}
	for _, cat := range categories {
		c.categories[cat.Name] = cat
	}
	for _, t := range types {
		c.types[t.Name] = append(c.types[t.Name], t)
	}
	c.indexAliases()
	return c
}

// Priority looks a name up in the dictionary.
func (c *Catalog) Priority(name string) (Priority, bool) {
	p, ok := c.priorities[name]
	return p, ok
}

func (c *Catalog) clusterDefault() Priority {
	if p, ok := c.priorities[ClusterDefaultPriority]; ok {
		return p
	}
	return fallbackPriority
}

// typeAndCategory finds the workload's type (preferring the one of its API group when several
// share a name) and that type's category.
func (c *Catalog) typeAndCategory(w *Workload) (*WorkloadType, *Category) {
	candidates := c.types[w.Type]
	if len(candidates) == 0 {
		return nil, nil
	}
	t := &candidates[0]
	for i := range candidates {
		if candidates[i].Group == w.Group {
			t = &candidates[i]
			break
		}
	}
	cat, ok := c.categories[t.Category]
	if !ok {
		return t, nil
	}
	return t, &cat
}

// Resolve gives the workload's priority (S7) and preemptibility (S8) under its project's policy.
func (c *Catalog) Resolve(w *Workload, policy Policy) Resolution {
	var r Resolution
	t, cat := c.typeAndCategory(w)
	var a *alias
	r.Priority, a, r.PriorityFrom = c.resolvePriority(w, policy, t, cat, &r.Warnings)
	if a != nil {
		r.PriorityAlias = a.Name
	}
	r.Preemptibility, r.PreemptibilityFrom = c.resolvePreemptibility(w, policy, t, cat, r.Priority, a, &r.Warnings)
	return r
}

// ResolvePriority is Resolve for callers that only need the priority.
func (c *Catalog) ResolvePriority(w *Workload, policy Policy) (Priority, []Warning) {
	var warnings []Warning
	t, cat := c.typeAndCategory(w)
	p, _, _ := c.resolvePriority(w, policy, t, cat, &warnings)
	return p, warnings
}

// firstPodLabel is a label of the workload's first pod, as a source of its own after the
// workload's labels. A bare pod has none: its labels are the workload's, read already.
func firstPodLabel(w *Workload, key string) (string, bool) {
	if len(w.Pods) == 0 || w.isOwnPod() {
		return "", false
	}
	v, ok := w.Pods[0].Labels[key]
	return v, ok
}

// isOwnPod reports whether the workload is a bare pod, its own top owner.
func (w *Workload) isOwnPod() bool {
	return len(w.Pods) > 0 && w.Pods[0].UID == w.UID && w.UID != ""
}

func warn(warnings *[]Warning, w *Workload, code WarningCode, msg string) {
	*warnings = append(*warnings, Warning{Workload: w.UID, Code: code, Message: msg})
}

// resolvePriority is S7, the alias the priority was read as (nil when none), and where it
// came from.
func (c *Catalog) resolvePriority(w *Workload, policy Policy, t *WorkloadType, cat *Category, warnings *[]Warning) (Priority, *alias, From) {
	p, a, from := c.userPriority(w, policy, t, cat, warnings)
	if from.Source == SourceNone {
		p, from.Source = c.defaultPriority(policy, t, cat)
	}
	if from.Source == SourceNone {
		p, from.Source = c.clusterDefault(), SourceClusterDefault
	}
	p, from.Clamped = c.clamp(w, p, policy, warnings)
	return p, a, from
}

// userPriority is S7 steps 1-3: what the user asked for on the workload, a dictionary entry
// or an alias of one, and where (Source is SourceNone when nothing was taken; Ignored names
// a place the project's policy ignored). A label naming neither is skipped with one warning
// per name, however many places carry it.
func (c *Catalog) userPriority(w *Workload, policy Policy, t *WorkloadType, cat *Category, warnings *[]Warning) (Priority, *alias, From) {
	type source struct {
		value, where string
		ok           bool
		isLabel      bool
		from         Source
	}
	owner, ownerOK := w.Labels[LabelPriority]
	pod, podOK := firstPodLabel(w, LabelPriority)
	spec := ""
	if len(w.Pods) > 0 {
		spec = w.Pods[0].PriorityClassName
	}
	sources := [3]source{
		{owner, "the workload's label " + LabelPriority, ownerOK, true, SourceLabel},
		{pod, "the pod's label " + LabelPriority, podOK, true, SourcePodLabel},
		{spec, "the pod's spec.priorityClassName", spec != "", false, SourcePriorityClassName},
	}
	var unknown []unknownValue
	chosen := -1
	var p Priority
	var a *alias
	for i, s := range sources {
		if !s.ok {
			continue
		}
		var known bool
		if p, a, known = c.lookup(s.value); known {
			chosen = i
			break
		}
		if s.isLabel {
			unknown = noteUnknown(unknown, s.value, s.where)
		}
	}
	for _, u := range unknown {
		warn(warnings, w, InvalidPriority, "Priority "+strconv.Quote(u.value)+" in "+strings.Join(u.places, " and ")+
			" is not in the priority dictionary; it is ignored. Use one of the dictionary's names"+c.aliasHint()+".")
	}
	if chosen < 0 {
		return Priority{}, nil, From{}
	}
	s := sources[chosen]
	if policy.ForbidPriorityChange {
		if p.Name == c.policyPriority(policy, t, cat).Name {
			return p, a, From{Source: s.from} // what the policy gives anyway: asked for explicitly, no change (S9)
		}
		warn(warnings, w, PriorityChangeNotAllowed, "The project does not allow changing priority; "+
			s.where+" ("+s.value+") is ignored.")
		return Priority{}, nil, From{Ignored: s.from}
	}
	return p, a, From{Source: s.from}
}

// aliasHint names the aliases, for a warning about a name that is neither an entry nor one.
func (c *Catalog) aliasHint() string {
	if c.aliasNames == "" {
		return ""
	}
	return ", or one of KAI's and Run:ai's priority class names (" + c.aliasNames + ")"
}

// policyPriority is the priority a workload gets without asking for one (S7 steps 4-7 and
// the clamp), without warnings.
func (c *Catalog) policyPriority(policy Policy, t *WorkloadType, cat *Category) Priority {
	p, from := c.defaultPriority(policy, t, cat)
	if from == SourceNone {
		p = c.clusterDefault()
	}
	var none []Warning
	p, _ = c.clamp(&Workload{}, p, policy, &none)
	return p
}

// defaultPriority is S7 steps 4-6, and which step gave it (SourceNone: none did).
func (c *Catalog) defaultPriority(policy Policy, t *WorkloadType, cat *Category) (Priority, Source) {
	if p, ok := c.priorities[policy.DefaultPriority]; ok {
		return p, SourceProjectDefault
	}
	if t != nil {
		if p, ok := c.priorities[t.Priority]; ok {
			return p, SourceTypeDefault
		}
	}
	if cat != nil {
		if p, ok := c.priorities[cat.DefaultPriority]; ok {
			return p, SourceCategoryDefault
		}
	}
	return Priority{}, SourceNone
}

func (c *Catalog) clamp(w *Workload, p Priority, policy Policy, warnings *[]Warning) (Priority, Clamp) {
	if lo, ok := c.priorities[policy.MinPriority]; ok && p.Value < lo.Value {
		warn(warnings, w, PriorityClamped, "Priority "+p.Name+" is below the project's minimum; "+lo.Name+" applies.")
		return lo, ClampedToMin
	}
	if hi, ok := c.priorities[policy.MaxPriority]; ok && p.Value > hi.Value {
		warn(warnings, w, PriorityClamped, "Priority "+p.Name+" is above the project's maximum; "+hi.Name+" applies.")
		return hi, ClampedToMax
	}
	return p, NotClamped
}

func validPreemptibility(v string) bool {
	return v == string(Preemptible) || v == string(NonPreemptible) || v == string(SemiPreemptible)
}

// resolvePreemptibility is S8. An alias the priority was read as gives KAI's preemptibility
// for its class, after the labels and before the type's: a KAI manifest that names a class
// asks for its preemptibility as much as for its priority.
func (c *Catalog) resolvePreemptibility(w *Workload, policy Policy, t *WorkloadType, cat *Category, p Priority, a *alias, warnings *[]Warning) (Preemptibility, From) {
	owner, ownerOK := w.Labels[LabelPreemptibility]
	pod, podOK := firstPodLabel(w, LabelPreemptibility)
	var invalid []unknownValue
	chosen, where, from := "", "", SourceNone
	for _, s := range [2]struct {
		v, where string
		ok       bool
		from     Source
	}{{owner, "the workload's label", ownerOK, SourceLabel}, {pod, "the pod's label", podOK, SourcePodLabel}} {
		if !s.ok {
			continue
		}
		if validPreemptibility(s.v) {
			chosen, where, from = s.v, s.where, s.from
			break
		}
		invalid = noteUnknown(invalid, s.v, s.where)
	}
	for _, u := range invalid {
		warn(warnings, w, InvalidPreemptibility, "Preemptibility "+strconv.Quote(u.value)+" in "+strings.Join(u.places, " and ")+" "+
			LabelPreemptibility+" is not preemptible, non-preemptible or semi-preemptible; it is ignored.")
	}
	def, defFrom := c.defaultPreemptibility(t, cat, p)
	switch {
	case chosen != "" && policy.ForbidPreemptibilityChange && Preemptibility(chosen) != def:
		warn(warnings, w, PreemptibilityChangeNotAllowed, "The project does not allow changing preemptibility; "+
			where+" "+LabelPreemptibility+" ("+chosen+") is ignored.")
		return def, From{Source: defFrom, Ignored: from}
	case chosen != "":
		return Preemptibility(chosen), From{Source: from}
	case a == nil:
		return def, From{Source: defFrom}
	case policy.ForbidPreemptibilityChange && a.Preemptibility != def:
		warn(warnings, w, PreemptibilityChangeNotAllowed, "The project does not allow changing preemptibility; "+
			"the priority class "+a.Name+"'s preemptibility ("+string(a.Preemptibility)+", as KAI gives it) is ignored.")
		return def, From{Source: defFrom, Ignored: SourceAlias}
	}
	return a.Preemptibility, From{Source: SourceAlias}
}

// defaultPreemptibility is S8 steps 3-5: what a workload gets without a label. A label naming
// it is no change, which a project that forbids changes takes without a warning (S9).
func (c *Catalog) defaultPreemptibility(t *WorkloadType, cat *Category, p Priority) (Preemptibility, Source) {
	if t != nil && validPreemptibility(string(t.Preemptibility)) {
		return t.Preemptibility, SourceTypeDefault
	}
	if cat != nil && validPreemptibility(string(cat.DefaultPreemptibility)) {
		return cat.DefaultPreemptibility, SourceCategoryDefault
	}
	if p.Value < PreemptibleBelow {
		return Preemptible, SourcePriorityValue
	}
	return NonPreemptible, SourcePriorityValue
}

// Kinds whose gang size S5 computes from their spec. (Switches, not maps: they are asked
// about every workload of every cycle.)
func kubeflowKind(kind string) bool {
	switch kind {
	case "PyTorchJob", "TFJob", "MPIJob", "JAXJob", "XGBoostJob":
		return true
	}
	return false
}

func rayKind(kind string) bool { return kind == "RayCluster" || kind == "RayJob" }

// jobSetKind: a JobSet, or a TrainJob (Kubeflow Trainer runs each as one).
func jobSetKind(kind string) bool { return kind == "JobSet" || kind == "TrainJob" }

func distributedType(t string) bool {
	return t == "Distributed training" || t == "Distributed inference"
}

// CanSuspend reports whether a kind has a suspend switch, so that preemptionMode suspend
// applies to it (S20); other kinds are terminated.
func CanSuspend(kind string) bool {
	return kind == "Job" || jobSetKind(kind) || kubeflowKind(kind) || rayKind(kind)
}

func sum32(xs []int32) int {
	n := 0
	for _, x := range xs {
		n += int(x)
	}
	return n
}

// ResolveGangSize is S5: how many of the workload's pods must be placed together. It returns
// at least 1, and a warning when the annotation is present but not a positive number.
func ResolveGangSize(w *Workload) (int, []Warning) {
	var warnings []Warning
	if v, ok := w.Annotations[AnnotationMinMembers]; ok {
		n, err := strconv.Atoi(v)
		if err == nil && n > 0 {
			return n, nil
		}
		warn(&warnings, w, InvalidMinMembers, "Annotation "+AnnotationMinMembers+"="+strconv.Quote(v)+
			" is not a positive number; it is ignored.")
	}
	n := 1
	switch {
	case w.Kind == "Job" && w.Group == "batch":
		n = 1
		if w.Gang.Parallelism != nil {
			n = int(*w.Gang.Parallelism)
		}
		if w.Gang.Completions != nil {
			n = min(n, int(*w.Gang.Completions)-int(w.Gang.Succeeded))
		}
	case kubeflowKind(w.Kind), rayKind(w.Kind), jobSetKind(w.Kind), distributedType(w.Type):
		n = sum32(w.Gang.Replicas)
	case w.Kind == "LeaderWorkerSet":
		n = int(w.Gang.GroupSize)
	case w.Gang.Existing > 0:
		n = int(w.Gang.Existing)
	}
	return max(n, 1), warnings
}
