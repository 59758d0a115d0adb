// Package routenames names the console's routes. Each feature's handler registers its routes
// under these names (web), and links are built from them with Echo's Reverse (web, and views
// through views.URL), so a path is written once, where its route is registered.
package routenames

// The pages and the forms they post to.
const (
	Home = "home"

	OverviewLive = "overview.live" // the Overview's live region, polled by the page

	Login        = "login"
	LoginSubmit  = "login.submit"
	Logout       = "logout"
	OIDCLogin    = "oidc.login"
	OIDCCallback = "oidc.callback"

	WorkloadTypes    = "workload-types"
	WorkloadTypesCSV = "workload-types.csv"
	WorkloadTypeSave = "workload-types.save"
	Priorities       = "priorities"
	PrioritiesCSV    = "priorities.csv"

	NodePools      = "node-pools"
	NodePoolsCSV   = "node-pools.csv"
	NodePoolCreate = "node-pools.create"
	NodePoolSave   = "node-pools.save"
	NodePoolDelete = "node-pools.delete"

	NetworkTopologyCreate = "network-topologies.create"
	NetworkTopologyDelete = "network-topologies.delete"

	Departments         = "departments"
	DepartmentsCSV      = "departments.csv"
	DepartmentCreate    = "departments.create"
	DepartmentSave      = "departments.save"
	DepartmentQuotaSave = "departments.quota.save"
	DepartmentDelete    = "departments.delete"

	Projects          = "projects"
	ProjectsCSV       = "projects.csv"
	ProjectCreate     = "projects.create"
	ProjectSave       = "projects.save"
	ProjectQuotaSave  = "projects.quota.save"
	ProjectPolicySave = "projects.policy.save"
	ProjectDelete     = "projects.delete"

	Access           = "access"
	AccessRuleCreate = "access.rules.create"
	AccessRuleDelete = "access.rules.delete"
	APIKeyCreate     = "access.keys.create"
	APIKeyRevoke     = "access.keys.revoke"

	EventHistory = "event-history"

	Nodes = "nodes"
)

// The Workloads page.
const (
	Workloads     = "workloads"
	WorkloadsCSV  = "workloads.csv"
	WorkloadsBulk = "workloads.bulk"
	// WorkloadsBulkOpen is a GET of the bulk form's address: a redirect to the Workloads view.
	WorkloadsBulkOpen = "workloads.bulk.open"
	WorkloadSave      = "workloads.save"
	// A workload's story; param id is the workload's UID (as GET /api/v1/workloads/{id}).
	Workload = "workloads.show"
	// A workload's actions, posted from its page (param id): Run:ai's STOP, RUN and DELETE.
	WorkloadStop   = "workloads.stop"
	WorkloadRun    = "workloads.run"
	WorkloadDelete = "workloads.delete"
)

// The Submit page.
const (
	Submit       = "submit"
	SubmitCreate = "submit.create"  // the form, posted: creates the workload
	SubmitFields = "submit.fields"  // the form's fields again, with the new type's defaults
	SubmitDryRun = "submit.dry-run" // the dry-run panel for the form as it is
)

// Usage over time: a project's and a department's page, and the JSON their charts and the
// Overview's load (query range=24h|7d|30d; format=csv for the table as a file).
const (
	Project         = "projects.show"    // param id
	Department      = "departments.show" // param id
	UsagePools      = "usage.pools"
	UsageProject    = "usage.project"    // param id
	UsageDepartment = "usage.department" // param id
)
