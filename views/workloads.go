package views

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"
)

// Workload is one workload as the scheduler last recorded it (the OpenAPI schema Workload, web/openapi.json). The id is the
// top owner's UID; pendingSeconds is how long it has waited (0 once it runs).
type Workload struct {
	ID             string  `json:"id"`
	Name           string  `json:"name"`
	Namespace      string  `json:"namespace"`
	Kind           string  `json:"kind"`
	Type           string  `json:"type"`
	Category       string  `json:"category"`
	ProjectID      *string `json:"projectId"`
	ProjectName    string  `json:"projectName"`
	DepartmentName string  `json:"departmentName"`
	// PriorityName is the priority's name (Run:ai's priority is its value, in RunAIWorkload).
	PriorityName  string `json:"priorityName"`
	PriorityValue int    `json:"priorityValue"`
	Preemptible   bool   `json:"preemptible"`
	// Preemptibility is the value itself: preemptible, non-preemptible or semi-preemptible
	// (S26), which Preemptible (kept for existing clients) reports as not preemptible.
	Preemptibility string `json:"preemptibility"`
	// PriorityFrom and PreemptibilityFrom say where each came from (S7, S8), a sentence a person
	// reads; "" until the scheduler has resolved the workload.
	PriorityFrom       string `json:"priorityFrom"`
	PreemptibilityFrom string `json:"preemptibilityFrom"`
	// Phase is Arbiter's phase (Pending, Running, Suspended, Preempted, Completed, Failed),
	// answered as Run:ai's k8sPhase; Run:ai's phase is RunAIWorkload's.
	Phase          string     `json:"k8sPhase"`
	Reason         string     `json:"reason"`
	Message        string     `json:"message"`
	QueuePosition  *int       `json:"queuePosition"` // nil unless pending
	Gang           int        `json:"gang"`
	RequestedGPUs  int        `json:"requestedGpus"`
	AllocatedGPUs  int        `json:"allocatedGpus"`
	NodePool       string     `json:"nodePool"`
	Nodes          []string   `json:"nodes"`
	CreatedAt      time.Time  `json:"createdAt"`
	StartedAt      *time.Time `json:"startedAt"`
	FinishedAt     *time.Time `json:"finishedAt"`
	PendingSeconds int64      `json:"pendingSeconds"`
	Preemptions    int        `json:"preemptions"`
	// Submitter is the subject of who submitted it through Arbiter; "" when created otherwise.
	Submitter string `json:"submitter"`
	// EstimatedStartAt is when a waiting workload is expected to start (null when it does
	// not wait, or cannot be told); EstimateBasis says on what basis, or what is missing.
	EstimatedStartAt *time.Time `json:"estimatedStartAt"`
	EstimateBasis    string     `json:"estimateBasis"`
	// NextStep says what a workload that does not run waits for and what would let it start
	// (S23), on GET /api/v1/workloads/{id} only (lists leave it out, as the sentence reads the
	// scheduler's figures of each workload's pool and project).
	NextStep string `json:"nextStep,omitempty"`
	RunAIWorkload
}

// RunAIWorkload are the fields of Run:ai's Workload schema that Arbiter's own names above do
// not answer: its phase (Run:ai's enum; Arbiter's is k8sPhase), the priority's value and name,
// the one tenant and cluster, who submitted it and from where (source: Control-plane for a
// workload submitted through Arbiter, Other for one created otherwise), when the record and its
// phase last changed, when it finished (completedAt and deletedAt: Arbiter's record does not
// tell a workload that completed from one deleted), its running pods and its conditions.
type RunAIWorkload struct {
	RunAIPhase              string           `json:"phase"`
	PhaseMessage            string           `json:"phaseMessage"`
	Priority                int              `json:"priority"`
	PriorityClassName       string           `json:"priorityClassName"`
	TenantID                int              `json:"tenantId"`
	ClusterID               string           `json:"clusterId"`
	DepartmentID            string           `json:"departmentId"`
	Source                  string           `json:"source"`
	SubmittedBy             string           `json:"submittedBy"`
	UpdatedAt               time.Time        `json:"updatedAt"`
	PhaseUpdatedAt          time.Time        `json:"phaseUpdatedAt"`
	K8sPhaseUpdatedAt       time.Time        `json:"k8sPhaseUpdatedAt"`
	CompletedAt             *time.Time       `json:"completedAt"`
	DeletedAt               *time.Time       `json:"deletedAt"`
	RunningPods             int              `json:"runningPods"`
	Conditions              []RunAICondition `json:"conditions"`
	CurrentNodePools        []string         `json:"currentNodePools"`
	DistributedFramework    string           `json:"distributedFramework"`
	TotalPendingTimeSeconds int64            `json:"totalPendingTimeSeconds"`
	TotalRunningTimeSeconds int64            `json:"totalRunningTimeSeconds"`
}

// RunAICondition is one of a workload's conditions in Run:ai's shape (Kubernetes' condition).
type RunAICondition struct {
	Type               string     `json:"type"`
	Status             string     `json:"status"`
	Reason             string     `json:"reason,omitempty"`
	Message            string     `json:"message,omitempty"`
	LastTransitionTime *time.Time `json:"lastTransitionTime"`
}

// WorkloadEvent is one entry of a workload's history (S24): Queued, Admitted, Preempted,
// Reclaimed, Suspended, Resumed, PriorityChanged, PreemptibilityChanged, Completed or Failed.
type WorkloadEvent struct {
	// ID is the event's number in the order events were recorded, as a string: Run:ai's
	// Event id is one.
	ID      string    `json:"id"`
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Actor   string    `json:"actor"`
	// PreemptorID is the workload a Preempted or Reclaimed event made room for; BorrowedGPUs
	// the GPUs the victim's project used beyond its deserved quota just before a reclaim.
	PreemptorID  string `json:"preemptorId,omitempty"`
	BorrowedGPUs *int   `json:"borrowedGpus,omitempty"`
	RunAIEvent
}

// RunAIEvent are Run:ai's names for a workload event's fields (its Event schema): when, a
// Kubernetes event type (Normal, or Warning for a preemption, a reclaim or a failure), the one
// cluster, who recorded it and the workload's top owner it is about.
type RunAIEvent struct {
	CreatedAt      time.Time      `json:"createdAt"`
	Type           string         `json:"type"`
	ClusterID      string         `json:"clusterId"`
	Source         string         `json:"source"`
	InvolvedObject InvolvedObject `json:"involvedObject"`
}

// InvolvedObject is the Kubernetes object an event is about.
type InvolvedObject struct {
	UID       string `json:"uid"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// WorkloadFilter is the Workloads page's filters, as they stand in its URL.
type WorkloadFilter struct {
	Project, Phase, Priority, Preemptible, Type, Search string
	Reason                                              string // a waiting reason's code, or "none"
	Pool                                                string // the node pool the workload runs in
	Finished                                            bool   // the tab with finished workloads (deleted=true)
	SortBy, SortOrder                                   string // kept by the filter form
}

// WorkloadsPage is the Workloads page: the filtered, sorted page of workloads, the inline and
// bulk changes the caller may make, and the outcome of a bulk change just made.
type WorkloadsPage struct {
	Page
	Rows               []WorkloadRow
	Filter             WorkloadFilter
	Projects           []string // the projects the caller sees, for the filter
	Priorities         []Priority
	Phases             []string
	Reasons            []string // the scheduler's waiting reasons, for the filter
	Columns            []SortLink
	CSVHref            string
	LiveHref           string // this view (filters, order, page): the table refreshes itself from it
	ActiveHref         string // the tab of workloads not finished
	FinishedHref       string // the tab with finished workloads
	NextHref, PrevHref string
	CanChange          bool   // the caller's role changes workloads somewhere: selects and the bulk form
	BulkAction         string // where the bulk form posts (with the filters in its query)
	Bulk               []BulkOutcome
	BulkError          string
	// BulkPreview says Bulk is a preview: what applying the form would do, nothing changed.
	BulkPreview bool
	// BulkMore names the outcomes an applied change had beyond those listed ("3 more changed").
	BulkMore []string
	// BulkForm is the bulk form as posted, kept after a preview (or a refusal) so that it can
	// be applied as it is.
	BulkForm BulkForm
}

// BulkForm is the bulk form's choices: the values to set ("" leaves one as it is), whether
// all matching the filter are meant, and the rows selected (their rows' boxes stay ticked).
type BulkForm struct {
	Priority, Preemptibility string
	All                      bool
	Selected                 map[string]bool
}

// WorkloadRow is one workload of the Workloads page with the changes the caller may make.
type WorkloadRow struct {
	Workload Workload
	Age      string
	// Start is the Queue cell's estimated start: how soon ("in 25m", "due now"), else
	// EstimateText's word; the time itself is in its title (EstimateTitle).
	Start          string
	SelectColumn   bool   // the page has the bulk form's checkbox column
	Controls       bool   // selects are shown (enabled, or disabled with the sentence why)
	Locked         string // why neither priority nor preemptibility can change here ("" when they can)
	PriorityLocked string // why the project's policy allows no priority change
	// PreemptibilityLocked is why the project's policy allows no preemptibility change.
	PreemptibilityLocked string
	Priorities           []string // the priorities the row may be set to (within the project's range)
	CSRFToken            string
	Saved                string // "priority" or "preemptibility" after a change
	Error                string // a refused change's sentence
	Selected             bool   // ticked for the bulk form (kept after a preview)
}

// BulkOutcome is what a bulk change did to one workload: changed, refused (with the
// sentence) or not found.
type BulkOutcome struct {
	ID, Name, Outcome, Message string
}

// A lock is why a row's control is disabled. Its sentence is shown once on the page, in the
// note above the table (LockNotes), however many rows it locks; a row has a short label that
// links to it, and the disabled select names it as its description (aria-describedby).
type Lock struct {
	ID       string // the note's element id, the same on every row and page it is on
	Sentence string
}

func lockFor(sentence string) Lock {
	sentence = asSentence(sentence)
	sum := sha256.Sum256([]byte(sentence))
	return Lock{ID: "lock-" + hex.EncodeToString(sum[:6]), Sentence: sentence}
}

// lockOf is why the row's field ("priority" or "preemptibility") cannot change, or the zero
// Lock when it can.
func lockOf(r WorkloadRow, field string) Lock {
	switch {
	case r.Locked != "":
		return lockFor(r.Locked)
	case field == "priority" && r.PriorityLocked != "":
		return lockFor(r.PriorityLocked)
	case field == "preemptibility" && r.PreemptibilityLocked != "":
		return lockFor(r.PreemptibilityLocked)
	}
	return Lock{}
}

// rowLocks are the row's locks, each once: the role's, or the policy's for priority and for
// preemptibility.
func rowLocks(r WorkloadRow) []Lock {
	if r.Locked != "" {
		return []Lock{lockFor(r.Locked)}
	}
	var out []Lock
	for _, s := range []string{r.PriorityLocked, r.PreemptibilityLocked} {
		if l := lockFor(s); s != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// lockLabel is a lock's short label in its row: which control it fixes, or "why" for the
// role's lock, which fixes both.
func lockLabel(r WorkloadRow, l Lock) string {
	switch {
	case r.Locked != "":
		return "why"
	case l == lockOf(r, "priority") && l == lockOf(r, "preemptibility"):
		return "priority and preemptibility"
	case l == lockOf(r, "priority"):
		return "priority"
	}
	return "preemptibility"
}

// rowCells is how many cells a workload's row has (the checkbox column, when there is one, and
// ten), which its refusal line spans.
func rowCells(r WorkloadRow) int {
	if r.SelectColumn {
		return 11
	}
	return 10
}

// LockNotes are the locks of the rows, each once, in the order they first appear.
func LockNotes(rows []WorkloadRow) []Lock {
	var out []Lock
	for _, r := range rows {
		if !r.Controls {
			continue
		}
		for _, l := range rowLocks(r) {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// asSentence gives a refusal (the API's message, lower-case and without a full stop) the
// capital and the full stop it needs beside another one.
func asSentence(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// outcomeClass is a bulk outcome as a CSS class name.
func outcomeClass(o string) string {
	switch o {
	case "changed", "would change":
		return "changed"
	case "not found":
		return "notfound"
	}
	return "refused"
}

// columnNamed is the sort link of a field.
func columnNamed(cols []SortLink, field string) SortLink {
	for _, c := range cols {
		if c.Field == field {
			return c
		}
	}
	return SortLink{}
}

// ariaSort is a header's aria-sort: the direction of whichever of its columns is sorted.
func ariaSort(cols ...SortLink) string {
	for _, c := range cols {
		if c.Active && c.Desc {
			return "descending"
		}
		if c.Active {
			return "ascending"
		}
	}
	return "none"
}

// NoEstimateYetBasis is the basis of a workload that waits and has no estimate yet: it has
// just begun to wait, and the next pass estimates it (server/estimates.go).
const NoEstimateYetBasis = "No estimate yet: the scheduler estimates every few seconds."

// hasEstimate says whether the Queue cell shows an estimate under the position.
func hasEstimate(w Workload) bool {
	text := EstimateText(w)
	return text != "" && text != "–"
}

// EstimateTitle is what a Queue cell's estimate says on hover: the time, and what it rests on.
func EstimateTitle(w Workload) string {
	if w.EstimatedStartAt == nil {
		return w.EstimateBasis
	}
	return EstimateText(w) + ". " + w.EstimateBasis
}

// EstimateText is a waiting workload's estimated start as the console shows it: the time
// (UTC), "estimating" for one the next pass estimates, "unknown" when it cannot be told, a
// dash when the workload does not wait.
func EstimateText(w Workload) string {
	switch {
	case w.EstimatedStartAt != nil:
		return w.EstimatedStartAt.UTC().Format("Jan 2 15:04 UTC")
	case w.EstimateBasis == NoEstimateYetBasis:
		return "estimating"
	case w.EstimateBasis != "":
		return "unknown"
	}
	return "–"
}
