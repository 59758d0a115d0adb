package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
)

// NamedAccessRule is an access rule with its scope's id and name as a RuleSelection names
// them: the department's or the project's, or those given for the system scope.
type NamedAccessRule struct {
	AccessRule
	ScopeKey  string `db:"scope_key"`
	ScopeName string `db:"scope_name"`
}

// RuleSelection is what a list of named access rules is drawn from.
type RuleSelection struct {
	// SystemScopeID and SystemScopeName are how the list names the system scope, which has
	// no row of its own: its scopeId and scopeName, in the answer and in filterBy and sortBy.
	SystemScopeID, SystemScopeName string
	// Subjects, when set, keeps the rules naming one of them.
	Subjects []string
	// Holder, when set, keeps the rules that apply to this person (as AccessRulesFor).
	Holder *RuleHolder
}

// RuleHolder is a person as access rules name them: by subject or email, and by their groups.
type RuleHolder struct {
	Subject, Email string
	Groups         []string
}

// NamedAccessRuleSpec is the list spec of named access rules, by the names Run:ai's API gives
// their fields (its AccessRulesSortFilterFields): roleId and roleName are each role's id and
// title (auth.Role), deletedAt is never set (a removed rule is gone) and phase always Ready
// (a rule applies from the moment it is made).
var NamedAccessRuleSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"subjectId":   {Kind: listquery.String, Column: "r.subject", Sortable: true},
		"subjectType": {Kind: listquery.String, Column: "r.subject_type", Sortable: true},
		"roleId":      {Kind: listquery.Int, Column: roleColumn(func(r auth.Role) string { return fmt.Sprint(r.ID()) }), Sortable: true},
		"roleName":    {Kind: listquery.String, Column: roleColumn(func(r auth.Role) string { return quoteSQL(r.Title()) }), Sortable: true},
		"scopeId":     {Kind: listquery.String, Column: namedRuleScopeKey, Sortable: true},
		"scopeType":   {Kind: listquery.String, Column: "r.scope_type", Sortable: true},
		"scopeName":   {Kind: listquery.String, Column: namedRuleScopeName, Sortable: true},
		"createdAt":   {Kind: listquery.Time, Column: "r.created_at", Sortable: true},
		"deletedAt":   {Kind: listquery.Time, Column: "NULL::timestamptz", Sortable: true, Nullable: true},
		"createdBy":   {Kind: listquery.String, Column: "r.created_by", Sortable: true},
		"phase":       {Kind: listquery.String, Column: "'Ready'::text", Sortable: true},
	},
	TieBreak: "r.number",
	// search finds text in the subject, the role's title or the scope's name.
	SearchColumn: "concat_ws(' ', r.subject, " + roleColumn(func(r auth.Role) string { return quoteSQL(r.Title()) }) + ", " + namedRuleScopeName + ")",
	Paged:        true,
}

const (
	namedRuleScopeKey  = "coalesce(r.scope_id::text, system_scope.id)"
	namedRuleScopeName = "coalesce(d.name, p.name, system_scope.name)"
	namedRuleColumns   = "r.*, " + namedRuleScopeKey + " AS scope_key, " + namedRuleScopeName + " AS scope_name"
)

// roleColumn is an SQL expression mapping the role column to value(role), from auth's roles.
func roleColumn(value func(auth.Role) string) string {
	var b strings.Builder
	b.WriteString("CASE r.role")
	for _, r := range auth.Roles {
		fmt.Fprintf(&b, " WHEN %s THEN %s", quoteSQL(string(r)), value(r))
	}
	b.WriteString(" END")
	return b.String()
}

// quoteSQL is s as an SQL string literal; only for the constant texts of roleColumn.
func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// namedRuleFrom joins each rule to its scope's row; its first two arguments are the system
// scope's id and name (RuleSelection), which the spec's columns name as system_scope's.
const namedRuleFrom = `
	FROM access_rules r
	CROSS JOIN (SELECT $1::text AS id, $2::text AS name) system_scope
	LEFT JOIN departments d ON r.scope_type = 'department' AND d.id = r.scope_id
	LEFT JOIN projects p ON r.scope_type = 'project' AND p.id = r.scope_id`

// where is the condition of sel and q (with its two leading arguments in args).
func (sel RuleSelection) where(q listquery.Query, args *listquery.Args) string {
	args.Add(sel.SystemScopeID)
	args.Add(sel.SystemScopeName)
	conds := []string{q.Where(NamedAccessRuleSpec, args)}
	if sel.Subjects != nil {
		conds = append(conds, "r.subject = ANY("+args.Add(sel.Subjects)+")")
	}
	if h := sel.Holder; h != nil {
		groups := h.Groups
		if groups == nil {
			groups = []string{}
		}
		subject, email, gs := args.Add(h.Subject), args.Add(h.Email), args.Add(groups)
		conds = append(conds, fmt.Sprintf(`((r.subject_type = 'user' AND (lower(r.subject) = lower(%s) OR (%s <> '' AND lower(r.subject) = lower(%s))))
			OR (r.subject_type = 'group' AND r.subject = ANY(%s)))`, subject, email, email, gs))
	}
	return strings.Join(conds, " AND ")
}

// NamedAccessRules is one page (q's offset and limit) of the rules sel and q select, in q's
// order, and how many they select over all pages.
func (s *Store) NamedAccessRules(ctx context.Context, q listquery.Query, sel RuleSelection) ([]NamedAccessRule, int, error) {
	var args listquery.Args
	where := sel.where(q, &args)
	var total int
	if err := s.pool.QueryRow(ctx, `SELECT count(*)`+namedRuleFrom+` WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+namedRuleColumns+namedRuleFrom+` WHERE `+where+
		` ORDER BY `+q.OrderBy(NamedAccessRuleSpec)+fmt.Sprintf(` LIMIT %s OFFSET %s`, args.Add(q.Limit), args.Add(q.Offset)), args...)
	rules, err := scanAll[NamedAccessRule](rows, err)
	return rules, total, err
}

// CountNamedAccessRules is how many rules sel and q select.
func (s *Store) CountNamedAccessRules(ctx context.Context, q listquery.Query, sel RuleSelection) (int, error) {
	var args listquery.Args
	var total int
	err := s.pool.QueryRow(ctx, `SELECT count(*)`+namedRuleFrom+` WHERE `+sel.where(q, &args), args...).Scan(&total)
	return total, classify(err)
}

// NamedAccessRule is the rule with the number, as sel names its scope.
func (s *Store) NamedAccessRule(ctx context.Context, number int32, sel RuleSelection) (NamedAccessRule, error) {
	var args listquery.Args
	where := sel.where(listquery.Query{}, &args)
	rows, err := s.pool.Query(ctx, `SELECT `+namedRuleColumns+namedRuleFrom+
		` WHERE `+where+` AND r.number = `+args.Add(number), args...)
	return scanOne[NamedAccessRule](rows, err, fmt.Sprintf("access rule %d", number))
}
