package scheduler

// Where a workload's priority and preemptibility came from (S7, S8), so that a person can
// tell a value asked for from a default, a clamp, or a request the project ignored. From holds
// no names: resolutions are shared by every workload of the same labels, type and policy
// (resolvememo.go), across projects and kinds; Sentence adds the names of one workload.

// Source is the place a value was read from.
type Source uint8

const (
	SourceNone Source = iota
	// SourceLabel is the label on the top owner (S7 step 1, S8 step 1).
	SourceLabel
	// SourcePodLabel is the same label on the workload's first pod (S7 step 2, S8 step 2).
	SourcePodLabel
	// SourcePriorityClassName is the pod's spec.priorityClassName (S7 step 3).
	SourcePriorityClassName
	// SourceAlias is KAI's preemptibility for the class name the priority was read as.
	SourceAlias
	SourceProjectDefault
	SourceTypeDefault
	SourceCategoryDefault
	// SourceClusterDefault is ClusterDefaultPriority (S7 step 7).
	SourceClusterDefault
	// SourcePriorityValue is preemptibility derived from the priority's value (S8 step 5).
	SourcePriorityValue
)

// Clamp says whether a priority was brought into its project's range, and to which bound.
type Clamp uint8

const (
	NotClamped Clamp = iota
	ClampedToMin
	ClampedToMax
)

// From is where one value came from.
type From struct {
	Source  Source
	Clamped Clamp // priority only
	// Ignored is a place that asked for another value, ignored because the project does not
	// allow changing it; SourceNone when none was.
	Ignored Source
}

// Names are what a sentence about a workload's values names: its kind, project, type and
// category, and the KAI or Run:ai class name its priority was read as.
type Names struct {
	Kind, Project, Type, Category, Alias string
	// Priority is the resolved priority's name: when it was clamped, the bound's.
	Priority string
}

// PrioritySentence tells where a priority came from, for a person: "asked for with the label
// priorityClassName on the Job", "project vision's default", "the default of workload type
// Standard training, clamped to project vision's maxPriority high". It is "" for the zero
// From: not resolved.
func (f From) PrioritySentence(n Names) string {
	if f.Source == SourceNone {
		return ""
	}
	s := f.sourceSentence(n, LabelPriority)
	switch f.Clamped {
	case ClampedToMin:
		s += ", clamped to " + projectPossessive(n.Project) + " minPriority " + n.Priority
	case ClampedToMax:
		s += ", clamped to " + projectPossessive(n.Project) + " maxPriority " + n.Priority
	}
	return s + f.ignoredSentence(n, LabelPriority, "priority")
}

// PreemptibilitySentence tells where a preemptibility came from, for a person ("" for the
// zero From).
func (f From) PreemptibilitySentence(n Names) string {
	if f.Source == SourceNone {
		return ""
	}
	return f.sourceSentence(n, LabelPreemptibility) + f.ignoredSentence(n, LabelPreemptibility, "preemptibility")
}

func (f From) sourceSentence(n Names, label string) string {
	switch f.Source {
	case SourceLabel, SourcePodLabel, SourcePriorityClassName:
		s := "asked for with " + place(f.Source, n, label)
		if n.Alias != "" && label == LabelPriority {
			s += " (KAI's and Run:ai's class name " + n.Alias + ", read as " + n.Priority + ")"
		}
		return s
	case SourceAlias:
		return "KAI's preemptibility for the priority class " + orUnnamed(n.Alias)
	case SourceProjectDefault:
		return projectPossessive(n.Project) + " default"
	case SourceTypeDefault:
		return "the default of workload type " + orUnnamed(n.Type)
	case SourceCategoryDefault:
		return "the default of category " + orUnnamed(n.Category)
	case SourceClusterDefault:
		return "the cluster's default"
	case SourcePriorityValue:
		return "from its priority " + orUnnamed(n.Priority) + ": preemptible below value 100"
	}
	return ""
}

func (f From) ignoredSentence(n Names, label, what string) string {
	if f.Ignored == SourceNone {
		return ""
	}
	asked := place(f.Ignored, n, label)
	if f.Ignored == SourceAlias {
		asked = "the preemptibility of the priority class " + orUnnamed(n.Alias)
	}
	project := "project " + n.Project
	if n.Project == "" {
		project = "the project"
	}
	return "; " + asked + " was ignored: " + project + " does not allow changing " + what
}

// place names where a label or class name is.
func place(s Source, n Names, label string) string {
	switch s {
	case SourceLabel:
		kind := n.Kind
		if kind == "" {
			kind = "workload"
		}
		return "the label " + label + " on the " + kind
	case SourcePodLabel:
		return "the label " + label + " on its pod"
	case SourcePriorityClassName:
		return "spec.priorityClassName on its pod"
	}
	return "a label"
}

func projectPossessive(project string) string {
	if project == "" {
		return "the project's"
	}
	return "project " + project + "'s"
}

func orUnnamed(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return s
}
