package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// AccessRule binds a subject (a user by email or subject, or an OIDC group) to a role at a scope.
type AccessRule struct {
	ID          uuid.UUID  `db:"id"`
	Number      int32      `db:"number"`       // the rule's integer id, given when it is made (Run:ai's API names rules by it)
	SubjectType string     `db:"subject_type"` // "user" or "group"
	Subject     string     `db:"subject"`
	Role        string     `db:"role"`
	ScopeType   string     `db:"scope_type"` // "system", "department", "project"
	ScopeID     *uuid.UUID `db:"scope_id"`
	CreatedAt   time.Time  `db:"created_at"`
	CreatedBy   string     `db:"created_by"`
}

// NewAccessRule is what an admin gives to create a rule.
type NewAccessRule struct {
	SubjectType, Subject, Role, ScopeType string
	ScopeID                               *uuid.UUID
}

// AccessRuleSpec is the list spec of access rules.
var AccessRuleSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"subjectType": {Kind: listquery.String, Column: "r.subject_type", Sortable: true},
		"subject":     {Kind: listquery.String, Column: "r.subject", Sortable: true},
		"role":        {Kind: listquery.String, Column: "r.role", Sortable: true},
		"scopeType":   {Kind: listquery.String, Column: "r.scope_type", Sortable: true},
		"createdAt":   {Kind: listquery.Time, Column: "r.created_at", Sortable: true},
	},
	DefaultSort:  "subject",
	TieBreak:     "r.id",
	SearchColumn: "r.subject",
}

// AccessRules lists access rules.
func (s *Store) AccessRules(ctx context.Context, q listquery.Query) ([]AccessRule, error) {
	var args listquery.Args
	rows, err := s.pool.Query(ctx, `SELECT r.* FROM access_rules r WHERE `+q.Where(AccessRuleSpec, &args)+` ORDER BY `+q.OrderBy(AccessRuleSpec), args...)
	return scanAll[AccessRule](rows, err)
}

// AccessRulesFor returns the rules that apply to a user: those naming their subject or email
// (case-insensitively) and those naming one of their groups.
func (s *Store) AccessRulesFor(ctx context.Context, subject, email string, groups []string) ([]AccessRule, error) {
	if groups == nil {
		groups = []string{}
	}
	rows, err := s.pool.Query(ctx, `
		SELECT r.* FROM access_rules r
		WHERE (r.subject_type = 'user' AND (lower(r.subject) = lower($1) OR ($2 <> '' AND lower(r.subject) = lower($2))))
		   OR (r.subject_type = 'group' AND r.subject = ANY($3))
		ORDER BY r.id`, subject, email, groups)
	return scanAll[AccessRule](rows, err)
}

// CreateAccessRule adds a rule, with its audit row.
func (s *Store) CreateAccessRule(ctx context.Context, n NewAccessRule, by Actor) (AccessRule, error) {
	n.Subject = strings.TrimSpace(n.Subject)
	if n.Subject == "" {
		return AccessRule{}, InvalidField("subject", "an access rule needs a subject: a user's email or subject, or a group name")
	}
	var out AccessRule
	entry := by.entry("create", "access-rule", "", n.Subject)
	err := s.changeConfig(ctx, "access_rules", entry, func(tx pgx.Tx, e *AuditEntry) error {
		rows, err := tx.Query(ctx, `
			INSERT INTO access_rules (subject_type, subject, role, scope_type, scope_id, created_by)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
			n.SubjectType, n.Subject, n.Role, n.ScopeType, n.ScopeID, by.Subject)
		out, err = scanOne[AccessRule](rows, err, "access rule")
		if err != nil {
			if errors.Is(err, ErrConflict) {
				return Conflict("%s %s already holds %s at that scope", n.SubjectType, n.Subject, n.Role)
			}
			return err
		}
		e.EntityID = out.ID.String()
		e.HTTPStatus = 201
		e.Changes = map[string]any{"subjectType": n.SubjectType, "subject": n.Subject, "role": n.Role,
			"scopeType": n.ScopeType, "scopeId": n.ScopeID}
		return nil
	})
	return out, err
}

// DeleteAccessRule removes a rule, with its audit row.
func (s *Store) DeleteAccessRule(ctx context.Context, id uuid.UUID, by Actor) error {
	entry := by.entry("delete", "access-rule", id.String(), "")
	return s.changeConfig(ctx, "access_rules", entry, func(tx pgx.Tx, e *AuditEntry) error {
		rows, err := tx.Query(ctx, `DELETE FROM access_rules WHERE id = $1 RETURNING *`, id)
		old, err := scanOne[AccessRule](rows, err, "access rule "+id.String())
		if err != nil {
			return err
		}
		e.EntityName = old.Subject
		e.HTTPStatus = 204
		e.Changes = map[string]any{"removed": map[string]any{"subjectType": old.SubjectType, "subject": old.Subject,
			"role": old.Role, "scopeType": old.ScopeType, "scopeId": old.ScopeID}}
		return nil
	})
}

// SubjectChoice is a person or a group an access rule may name, as the Access page offers it.
type SubjectChoice struct {
	Subject string // what a rule names: the user's email (else their subject), or the group
	Label   string // the user's name, or "group"
}

// maxSubjectChoices bounds each list the Access page offers (a rule may still name anyone).
const maxSubjectChoices = 500

// RuleSubjectChoices lists who an access rule may name by choice: the users who have signed
// in (by email, else subject, with their names) and the groups seen on them or already named
// by a rule, each sorted and at most maxSubjectChoices.
func (s *Store) RuleSubjectChoices(ctx context.Context) (users, groups []SubjectChoice, err error) {
	rows, err := s.pool.Query(ctx, `
		SELECT coalesce(nullif(email, ''), subject), name FROM users
		ORDER BY lower(coalesce(nullif(name, ''), nullif(email, ''), subject)), 1 LIMIT $1`, maxSubjectChoices)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var c SubjectChoice
		if err := rows.Scan(&c.Subject, &c.Label); err != nil {
			rows.Close()
			return nil, nil, err
		}
		users = append(users, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	rows, err = s.pool.Query(ctx, `
		SELECT g FROM (SELECT unnest(groups) AS g FROM users UNION SELECT subject FROM access_rules WHERE subject_type = 'group') x
		WHERE g <> '' ORDER BY lower(g), g LIMIT $1`, maxSubjectChoices)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		c := SubjectChoice{Label: "group"}
		if err := rows.Scan(&c.Subject); err != nil {
			return nil, nil, err
		}
		groups = append(groups, c)
	}
	return users, groups, rows.Err()
}
