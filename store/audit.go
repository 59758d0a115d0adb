package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// AuditEntry is one row of the append-only audit log (docs/security.md "Audit").
type AuditEntry struct {
	ID          int64          `db:"id"`
	At          time.Time      `db:"at"`
	Subject     string         `db:"subject"`
	SubjectType string         `db:"subject_type"`
	SourceIP    string         `db:"source_ip"`
	Action      string         `db:"action"`
	HTTPMethod  string         `db:"http_method"`
	EntityType  string         `db:"entity_type"`
	EntityID    string         `db:"entity_id"`
	EntityName  string         `db:"entity_name"`
	Result      string         `db:"result"`
	HTTPStatus  int            `db:"http_status"`
	RequestID   string         `db:"request_id"`
	Changes     map[string]any `db:"changes"`
}

// Actor says who makes a change and through which request; it becomes the audit row's
// subject fields and the rows' updated_by.
type Actor struct {
	Subject     string
	SubjectType string // "user", "group", "api-key", "system"
	SourceIP    string
	RequestID   string
	HTTPMethod  string
	// MayReadProject says whether the actor may read a project (id, department id); a
	// refusal names another project only when it does. nil: it may read none.
	MayReadProject func(projectID, departmentID uuid.UUID) bool
}

// Change is one field's before and after, as recorded in the audit log.
type Change struct {
	From any `json:"from"`
	To   any `json:"to"`
}

// asCreated makes a create's changes read as such: nothing before. A create inserts a row
// holding placeholders and applies to it the update any later change would; what the
// placeholders held was never anyone's value.
func (e *AuditEntry) asCreated() {
	for field, v := range e.Changes {
		if c, ok := v.(Change); ok {
			c.From = nil
			e.Changes[field] = c
		}
	}
}

func (a Actor) entry(action, entityType, entityID, entityName string) AuditEntry {
	return AuditEntry{
		Subject: a.Subject, SubjectType: a.SubjectType, SourceIP: a.SourceIP, RequestID: a.RequestID,
		HTTPMethod: a.HTTPMethod, Action: action, EntityType: entityType, EntityID: entityID,
		EntityName: entityName, Result: "success", HTTPStatus: 200, Changes: map[string]any{},
	}
}

func insertAudit(ctx context.Context, tx pgx.Tx, e AuditEntry) error {
	changes, err := json.Marshal(e.Changes)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO audit_log (subject, subject_type, source_ip, action, http_method, entity_type,
		                       entity_id, entity_name, result, http_status, request_id, changes)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		e.Subject, e.SubjectType, e.SourceIP, e.Action, e.HTTPMethod, e.EntityType,
		e.EntityID, e.EntityName, e.Result, e.HTTPStatus, e.RequestID, changes)
	return err
}

// RecordAudit writes one audit row on its own, for requests that changed nothing (refused
// or failed) and for logins and logouts.
func (s *Store) RecordAudit(ctx context.Context, e AuditEntry) error {
	return s.InTx(ctx, func(tx pgx.Tx) error { return insertAudit(ctx, tx, e) })
}

// AuditEntries returns the newest audit rows first.
func (s *Store) AuditEntries(ctx context.Context, limit int) ([]AuditEntry, error) {
	rows, err := s.pool.Query(ctx, `SELECT * FROM audit_log ORDER BY id DESC LIMIT $1`, limit)
	return scanAll[AuditEntry](rows, err)
}

// AuditSpec is the list spec of the audit log (docs/security.md "Audit").
var AuditSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"subject":    {Kind: listquery.String, Column: "a.subject", Sortable: true},
		"action":     {Kind: listquery.String, Column: "a.action", Sortable: true},
		"entityType": {Kind: listquery.String, Column: "a.entity_type", Sortable: true},
		"result":     {Kind: listquery.String, Column: "a.result", Sortable: true},
		"at":         {Kind: listquery.Time, Column: "a.at", Sortable: true},
	},
	DefaultSort:  "at",
	TieBreak:     "a.id",
	SearchColumn: "a.entity_name",
	Paged:        true,
}

// AuditFilter narrows the audit log beyond the list query: a time window, and (for callers who
// may only see their own actions) one subject.
type AuditFilter struct {
	Start, End  *time.Time
	OnlySubject string
}

// AuditLog returns one page of the audit log and the next page's offset (nil on the last page).
// Without an explicit sort it lists the newest rows first.
func (s *Store) AuditLog(ctx context.Context, q listquery.Query, f AuditFilter) ([]AuditEntry, *int, error) {
	var args listquery.Args
	where := q.Where(AuditSpec, &args)
	if f.Start != nil {
		where += " AND a.at >= " + args.Add(*f.Start)
	}
	if f.End != nil {
		where += " AND a.at < " + args.Add(*f.End)
	}
	if f.OnlySubject != "" {
		where += " AND a.subject = " + args.Add(f.OnlySubject)
	}
	rows, err := s.pool.Query(ctx, `SELECT a.* FROM audit_log a WHERE `+where+` ORDER BY `+q.OrderBy(AuditSpec)+` `+q.Page(&args), args...)
	entries, err := scanAll[AuditEntry](rows, err)
	if err != nil {
		return nil, nil, err
	}
	entries, next := listquery.Next(q, entries)
	return entries, next, nil
}
