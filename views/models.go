// Package views holds the console's templ components and the view models that feed both the
// HTML pages and the JSON API, so a page and the API never disagree. It imports neither the
// store nor Echo.
package views

import "time"

// Priority is an entry of the priority dictionary (api.md "Priority").
type Priority struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Value         int       `json:"value"`
	Source        string    `json:"source"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
	ClusterStatus string    `json:"clusterStatus"`
}

// Category is a workload category (api.md "Category").
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

// WorkloadType is a workload type (api.md "WorkloadType"). PriorityID and Preemptibility are
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

// Page is what every page's layout needs.
type Page struct {
	Title     string
	Nav       string // the navigation entry to highlight
	User      string
	Role      string
	CSRFToken string
	Banner    string // a warning across the top, e.g. when the database is unreachable
}

// NavItem is one entry of the left navigation.
type NavItem struct {
	Key, Label, Href string
}

// Navigation lists the console's pages in the order of console.md; pages join it as they are built.
var Navigation = []NavItem{
	{"workload-types", "Workload types", "/workload-types"},
	{"priorities", "Priorities", "/priorities"},
}

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
