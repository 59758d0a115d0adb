package views

import "time"

// RunAIGrant is a role at a scope as Run:ai's authorization API names them: its
// AccessRuleCreationFields with the role's and the scope's names (EnrichmentDataFields) and
// the installation's one tenant and cluster.
type RunAIGrant struct {
	SubjectID   string `json:"subjectId"`
	SubjectType string `json:"subjectType"` // user, group, or app (an API key's own binding)
	RoleID      int32  `json:"roleId"`
	RoleName    string `json:"roleName"`
	ScopeID     string `json:"scopeId"`
	ScopeType   string `json:"scopeType"` // system, department or project
	ScopeName   string `json:"scopeName"`
	ClusterID   string `json:"clusterId"`
	TenantID    int    `json:"tenantId"`
}

// RunAIAccessRule is an access rule in Run:ai's AccessRule shape: the rule's number is its
// id, and ruleUuid is its id on Arbiter's own /api/v1/access-rules.
type RunAIAccessRule struct {
	ID int32 `json:"id"`
	RunAIGrant
	RuleUUID  string                `json:"ruleUuid"`
	CreatedAt time.Time             `json:"createdAt"`
	UpdatedAt time.Time             `json:"updatedAt"`
	CreatedBy string                `json:"createdBy"`
	Status    RunAIAccessRuleStatus `json:"status"`
}

// RunAIAccessRuleStatus is Run:ai's AccessRuleStatusResponse: a rule applies once made.
type RunAIAccessRuleStatus struct {
	Phase string `json:"phase"` // Ready
}

// RunAIMyAccessRule is one of the caller's own grants in Run:ai's MeAccessRule shape: a stored
// access rule has its number as id; what no rule grants (an API key's own binding, the admin
// role of the configuration's admins) has none.
type RunAIMyAccessRule struct {
	ID *int32 `json:"id,omitempty"`
	RunAIGrant
}

// RunAIRole is one of Arbiter's roles in Run:ai's RoleV1 shape: predefined (not custom),
// always enabled, with the permissions Arbiter's authorization table gives it. arbiterRole
// is the role's name in Arbiter's own API.
type RunAIRole struct {
	ID               int32             `json:"id"`
	Name             string            `json:"name"`
	ArbiterRole      string            `json:"arbiterRole"`
	Description      string            `json:"description"`
	Permissions      []RunAIPermission `json:"permissions"`
	CreatedAt        time.Time         `json:"createdAt"`
	UpdatedAt        time.Time         `json:"updatedAt"`
	CreatedBy        string            `json:"createdBy"`
	Custom           bool              `json:"custom"`
	Enabled          bool              `json:"enabled"`
	EffectiveEnabled bool              `json:"effectiveEnabled"`
}

// RunAIPermission is what a role may do to one of Run:ai's resource types (its Permission).
type RunAIPermission struct {
	ResourceType string   `json:"resourceType"`
	DisplayName  string   `json:"displayName"`
	GroupID      string   `json:"groupId"`
	Actions      []string `json:"actions"` // create, read, update, delete, in that order
}
