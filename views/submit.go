package views

// SubmitPage is the Submit page (docs/console.md): the form of a native workload and, beside it, the
// dry run of what the form describes.
type SubmitPage struct {
	Page
	// CanSubmit is false for a caller whose role submits nowhere (a viewer): no form is shown.
	CanSubmit bool
	Form      SubmitForm
	DryRun    DryRunPanel
}

// SubmitOption is one choice of a select: the value sent and the label shown.
type SubmitOption struct{ Value, Label string }

// SubmitForm is the form's values and choices. Its inputs are named as the submission API
// names the fields (spec.image...), so that a refusal's field places its sentence.
type SubmitForm struct {
	Types      []SubmitOption // the native kinds: value the route's path segment ("trainings")
	Projects   []SubmitOption // the projects the caller may submit to: value the id
	Priorities []string

	Type, Project, Name, Image, Command string
	Args                                string
	GPUs, Workers, Replicas, Port       string
	// CPU (cores) and Memory (a Kubernetes quantity) per replica; "" asks for none.
	CPU, Memory string
	// Env is the environment variables as typed: one NAME=value a line.
	Env string
	// Pools are the project's node pools, in its order; NodePools those chosen (none: any of
	// the project's).
	Pools                    []string
	NodePools                []string
	Priority, Preemptibility string
	// CloneOf names the workload the form was prefilled from ("" when it was not); CloneNote
	// says what could not be copied.
	CloneOf, CloneNote string
	// HasWorkers and HasReplicas say which fields the type has: workers (a distributed
	// training), replicas and a serving port (an inference).
	HasWorkers, HasReplicas bool
	// DefaultPriority and DefaultPreemptibility are what the type (and project) give when the
	// form keeps them; shown beside the fields.
	DefaultPriority, DefaultPreemptibility string
	Error                                  FieldError
}

// DryRunPanel is what the scheduler would do with the form's workload now.
type DryRunPanel struct {
	// Outcome is start-now, start-after-preemption, start-after-reclaim or wait; "" when no
	// dry run was made, and Problem then says why (a field to fill, a refusal, no cluster).
	Outcome  string
	Headline string
	Nodes    []string
	Victims  []DryRunVictim
	Reason   string
	Message  string
	// EstimatedStart is when it would start ("" unknown) and EstimateBasis on what it rests.
	EstimatedStart string
	EstimateBasis  string
	Problem        string
	// MadeAs is what the workload would be made as, and why ("" for the kinds made as one
	// thing): a distributed training is a PyTorchJob or an indexed Job.
	MadeAs string
}

// DryRunVictim is a workload the dry run would evict, linked to its page.
type DryRunVictim struct {
	ID, Name, Project, Priority, Rule string
	GPUs                              int64
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
