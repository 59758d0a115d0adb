package web

import (
	"context"
	"net/http"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// AuditStore records audit rows written outside a change's own transaction: refused and
// failed requests (a successful change writes its row in its own transaction).
type AuditStore interface {
	RecordAudit(ctx context.Context, e store.AuditEntry) error
}

const (
	auditTargetKey = "arbiter.auditTarget"
	auditedKey     = "arbiter.audited"
)

// markAudited says the handler writes its own audit row (login, logout), so auditFailures
// does not write a second one.
func markAudited(c echo.Context) { c.Set(auditedKey, true) }

type auditTarget struct{ entityType, entityID, action string }

// target names what a mutating request acts on, for its audit row.
func target(c echo.Context, action, entityType, entityID string) {
	c.Set(auditTargetKey, auditTarget{entityType: entityType, entityID: entityID, action: action})
}

// actor is the store's view of who makes a change through this request.
func actor(c echo.Context) store.Actor {
	id := identity(c)
	return store.Actor{
		Subject: id.Subject, SubjectType: id.SubjectType, SourceIP: c.RealIP(),
		RequestID: requestID(c), HTTPMethod: c.Request().Method,
		MayReadProject: func(project, department uuid.UUID) bool {
			return can(c, auth.Read, auth.Project(project.String(), department.String()))
		},
	}
}

func isMutating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// auditFailures puts on record every mutating request that did not succeed, so refused
// attempts are on record too. A signed-in caller's failure gets a row of its own; a refusal
// (401, 403, or any failure of a caller without credentials) is counted, and written sampled
// (refusals.go), since anyone can send those without bound. A refused read is counted only.
func (s *Server) auditFailures(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if c.Get(auditedKey) == true {
			return err
		}
		status := c.Response().Status
		if err != nil {
			status, _ = statusOf(err)
		}
		if status < 400 {
			return err
		}
		mutating := isMutating(c.Request().Method)
		caller := identity(c)
		reason := ""
		switch {
		case status == http.StatusUnauthorized:
			reason = refusedUnauthenticated
		case status == http.StatusForbidden:
			reason = refusedForbidden
		case status == http.StatusTooManyRequests:
			reason = refusedLimited
		case !caller.Authenticated() && mutating:
			reason = refusedAnonymous
		}
		if reason != "" && !mutating {
			s.refusals.counter.Refused(routeOf(c), reason)
			return err
		}
		if !mutating || (s.audit == nil && reason == "") {
			return err
		}
		t, _ := c.Get(auditTargetKey).(auditTarget)
		if t.action == "" {
			t = auditTarget{action: "request", entityType: c.Path()}
		}
		result := "failure"
		if status == http.StatusForbidden || status == http.StatusUnauthorized {
			result = "denied"
		}
		message := http.StatusText(status)
		if err != nil {
			_, message = statusOf(err)
		}
		e := actor(c)
		entry := store.AuditEntry{
			Subject: e.Subject, SubjectType: e.SubjectType, SourceIP: e.SourceIP, RequestID: e.RequestID,
			HTTPMethod: e.HTTPMethod, Action: t.action, EntityType: t.entityType, EntityID: t.entityID,
			Result: result, HTTPStatus: status, Changes: map[string]any{"error": message},
		}
		if reason != "" {
			subject := ""
			if caller.Authenticated() {
				subject = caller.Subject
			}
			s.refusals.refused(c, reason, subject, entry)
			return err
		}
		if aerr := s.audit.RecordAudit(context.WithoutCancel(c.Request().Context()), entry); aerr != nil {
			s.log.Warn("audit row not written", "request_id", e.RequestID, "err", aerr)
		}
		return err
	}
}

// routeOf is the request's route template, "unmatched" when no route matched.
func routeOf(c echo.Context) string {
	if p := c.Path(); p != "" {
		return p
	}
	return "unmatched"
}
