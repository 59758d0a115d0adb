package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// AuditEntry is one row of the append-only audit log (security.md "Audit").
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
}

// Change is one field's before and after, as recorded in the audit log.
type Change struct {
	From any `json:"from"`
	To   any `json:"to"`
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

// AuditEntries returns the newest audit rows first (the full filtered listing arrives with
// the Event history page).
func (s *Store) AuditEntries(ctx context.Context, limit int) ([]AuditEntry, error) {
	rows, err := s.pool.Query(ctx, `SELECT * FROM audit_log ORDER BY id DESC LIMIT $1`, limit)
	return scanAll[AuditEntry](rows, err)
}
