// Package views holds the console's templ components and the view models that feed both the
// HTML pages and the JSON API, so a page and the API never disagree. It imports neither the
// store nor Echo.
package views

import (
	"time"

	"github.com/arbiterhq/arbiter/internal/routenames"
)

// Priority is an entry of the priority dictionary (the OpenAPI schema Priority).
type Priority struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Value         int       `json:"value"`
	Source        string    `json:"source"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
	ClusterStatus string    `json:"clusterStatus"`
}

// Category is a workload category (the OpenAPI schema Category).
type Category struct {
	ID                    string    `json:"id"`
	Name                  string    `json:"name"`
	Description           string    `json:"description"`
	DefaultPriorityID     string    `json:"defaultPriorityId"`
	DefaultPriorityName   string    `json:"defaultPriorityName"`
	DefaultPreemptibility string    `json:"defaultPreemptibility"`
	CreatedAt             time.Time `json:"createdAt"`
	CreatedBy             string    `json:"createdBy"`
	UpdatedAt             time.Time `json:"updatedAt"`
	UpdatedBy             string    `json:"updatedBy"`
}

// WorkloadType is a workload type (the OpenAPI schema WorkloadType). PriorityID and Preemptibility are
// nil when the type follows its category; the Effective fields always say what applies.
type WorkloadType struct {
	ID                      string    `json:"id"`
	Name                    string    `json:"name"`
	Group                   string    `json:"group"`
	External                bool      `json:"external"`
	CategoryID              *string   `json:"categoryId"`
	CategoryName            *string   `json:"categoryName"`
	PriorityID              *string   `json:"priorityId"`
	PriorityName            *string   `json:"priorityName"`
	Preemptibility          *string   `json:"preemptibility"`
	EffectivePriorityName   string    `json:"effectivePriorityName"`
	EffectivePreemptibility string    `json:"effectivePreemptibility"`
	GangPolicy              string    `json:"gangPolicy"`
	CreatedAt               time.Time `json:"createdAt"`
	CreatedBy               string    `json:"createdBy"`
	UpdatedAt               time.Time `json:"updatedAt"`
	UpdatedBy               string    `json:"updatedBy"`
}

// WorkloadTypeAnswer is a workload type as the API answers it, in Run:ai's shape: priorityId and
// priorityName are the priority that applies, resolved as the scheduler resolves it (the
// type's own, else its category's default, else the cluster default), because Run:ai always
// answers the resolved one. Arbiter's own setting is beside them: ownPriorityId and
// ownPriorityName, null while the type follows its category (or, without a category, the
// cluster default); a PUT of priorityId null returns to that.
type WorkloadTypeAnswer struct {
	WorkloadType            // its priorityId and priorityName are masked by the resolved ones below
	PriorityID      string  `json:"priorityId"`
	PriorityName    string  `json:"priorityName"`
	OwnPriorityID   *string `json:"ownPriorityId"`
	OwnPriorityName *string `json:"ownPriorityName"`
}

// Page is what every page's layout needs.
type Page struct {
	Title     string
	Nav       string // the navigation entry to highlight
	User      string
	Role      string
	CSRFToken string
	Banner    string // a warning across the top, e.g. when the database is unreachable
	CanAdmin  bool   // the caller is a system admin: admin-only navigation is shown
	CanSubmit bool   // the caller may submit workloads somewhere: Submit is shown
	// Leader is the replica that holds the leader election lease and Self this replica's
	// name; both empty without leader election.
	Leader, Self string
	// Charts says the page draws charts: it loads uPlot and charts.js (other pages do not).
	Charts bool
}

// NavItem is one entry of the left navigation: a page's route name (which is also Page.Nav on
// that page) and its label.
type NavItem struct {
	Route, Label string
}

// Navigation lists the console's pages in the order of docs/console.md; pages join it as they are built.
var Navigation = []NavItem{
	{routenames.Home, "Overview"},
	{routenames.Workloads, "Workloads"},
	{routenames.Nodes, "Nodes"},
	{routenames.Submit, "Submit"},
	{routenames.Projects, "Projects"},
	{routenames.Departments, "Departments"},
	{routenames.NodePools, "Node pools"},
	{routenames.WorkloadTypes, "Workload types"},
	{routenames.Priorities, "Priorities"},
	{routenames.Access, "Access"},
	{routenames.EventHistory, "Event history"},
}

// adminOnlyNav lists the navigation entries shown only to system admins.
var adminOnlyNav = map[string]bool{routenames.Access: true}

// SortLink is a column header that sorts the table it heads.
type SortLink struct {
	Label  string
	Field  string
	Href   string // the URL that sorts by this column (toggling direction when already sorted)
	Active bool
	Desc   bool
}

// WorkloadTypesPage is the Workload types page.
type WorkloadTypesPage struct {
	Page
	Types        []WorkloadType
	Categories   []Category
	Priorities   []Priority
	Search       string
	Category     string // filter: category name, "" for all
	ExternalOnly bool
	Columns      []SortLink
	CSVHref      string
	CanEdit      bool
}

// WorkloadTypeRow is one editable row with an optional message (after a refused change).
type WorkloadTypeRow struct {
	Type       WorkloadType
	Categories []Category
	Priorities []Priority
	CanEdit    bool
	CSRFToken  string
	Error      string
	Saved      bool
}

// PrioritiesPage is the Priorities page.
type PrioritiesPage struct {
	Page
	Priorities []Priority
	Columns    []SortLink
	CSVHref    string
}

// ErrorPage is shown when a page cannot be rendered (not found, database down, ...).
type ErrorPage struct {
	Page
	Status  int
	Message string
}

// LoginPage is the sign-in page: the OIDC button, or the local form.
type LoginPage struct {
	Page
	OIDC     bool
	Next     string
	Username string
	Error    string
}

// AuditEntry is one row of the audit log (docs/security.md "Audit").
type AuditEntry struct {
	ID          int64          `json:"id"`
	At          time.Time      `json:"at"`
	Subject     string         `json:"subject"`
	SubjectType string         `json:"subjectType"`
	SourceIP    string         `json:"sourceIp"`
	Action      string         `json:"action"`
	HTTPMethod  string         `json:"httpMethod"`
	EntityType  string         `json:"entityType"`
	EntityID    string         `json:"entityId"`
	EntityName  string         `json:"entityName"`
	Result      string         `json:"result"`
	HTTPStatus  int            `json:"httpStatus"`
	RequestID   string         `json:"requestId"`
	Changes     map[string]any `json:"changes"`
	// SubjectName is the API key's name when the subject is one (the page shows it, with the
	// key's id beside it); the API answers the subject as recorded.
	SubjectName string `json:"-"`
}

// EventHistoryPage is the Event history page.
type EventHistoryPage struct {
	Page
	Entries                                         []AuditEntry
	Subject, Action, EntityType, Result, Start, End string
	OwnOnly                                         bool // the caller sees only their own actions
	NextHref, PrevHref                              string
	// Tab is "audit" (the audit log) or "scheduling" (SchedulingEventsView); the hrefs open each.
	Tab                       string
	AuditHref, SchedulingHref string
	Scheduling                SchedulingEventsView
}

// AccessRule is a binding of a subject to a role at a scope (docs/security.md "Roles and scopes").
type AccessRule struct {
	ID          string    `json:"id"`
	SubjectType string    `json:"subjectType"`
	Subject     string    `json:"subject"`
	Role        string    `json:"role"`
	ScopeType   string    `json:"scopeType"`
	ScopeID     *string   `json:"scopeId"`
	CreatedAt   time.Time `json:"createdAt"`
	CreatedBy   string    `json:"createdBy"`
}

// APIKey describes a service account's key; the secret appears only in the answer that
// creates it (Token).
type APIKey struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Role       string     `json:"role"`
	ScopeType  string     `json:"scopeType"`
	ScopeID    *string    `json:"scopeId"`
	ExpiresAt  time.Time  `json:"expiresAt"`
	RevokedAt  *time.Time `json:"revokedAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	CreatedAt  time.Time  `json:"createdAt"`
	CreatedBy  string     `json:"createdBy"`
	Status     string     `json:"status"` // active, disabled, expired, revoked
	Token      string     `json:"token,omitempty"`
	// ClientID and ClientSecret are the key as Run:ai's token endpoints take it
	// (client_credentials: the key's id and the secret part of Token); in the creating answer only.
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
}

// AccessPage is the admin page for access rules and API keys.
type AccessPage struct {
	Page
	Rules    []AccessRule
	Keys     []APIKey
	Roles    []string
	NewToken *APIKey // the key just created, shown once
	Error    string
	// Scopes are the Scope picker's choices: the system, each department and each project,
	// by name (the form posts "system", "department:<id>" or "project:<id>").
	Scopes []Choice
	// ScopeNames names the departments and projects of the tables' scopes, by id.
	ScopeNames map[string]string
	// Subjects are the rule form's suggestions: users who have signed in, and groups.
	Subjects []Choice
}

// Choice is one option of a picker: the value posted and what the person reads.
type Choice struct {
	Value, Label, Group string // Group: the optgroup it is listed under ("" for none)
}
