package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web/routenames"
	"github.com/labstack/echo/v4"
)

// auditQuery reads the audit log's list parameters and time window. Callers who may not read
// at system scope see only their own rows (lists show only what the caller may see).
func auditQuery(c echo.Context, v url.Values) (listquery.Query, store.AuditFilter, error) {
	q, err := listquery.Parse(v, store.AuditSpec)
	if err != nil {
		return q, store.AuditFilter{}, err
	}
	if v.Get("sortBy") == "" && v.Get("sortOrder") == "" {
		q.Desc = true // newest first
	}
	var f store.AuditFilter
	for name, dst := range map[string]**time.Time{"start": &f.Start, "end": &f.End} {
		if s := v.Get(name); s != "" {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return q, f, badRequest("%s %q must be an RFC 3339 time, e.g. 2025-01-31T09:00:00Z", name, s)
			}
			*dst = &t
		}
	}
	if f.Start != nil && f.End != nil && !f.End.After(*f.Start) {
		return q, f, badRequest("end must be after start")
	}
	if !can(c, auth.Read, auth.System) {
		f.OnlySubject = identity(c).Subject
	}
	return q, f, nil
}

// eventHistory is the audit log: /api/v1/audit/log and the Event history page.
type eventHistory struct {
	entries interface {
		AuditLog(ctx context.Context, q listquery.Query, f store.AuditFilter) ([]store.AuditEntry, *int, error)
	}
	layout
}

func (h *eventHistory) routes(r router) {
	r.api.GET("/audit/log", h.auditLog)
	r.page(http.MethodGet, "/event-history", routenames.EventHistory, h.eventHistoryPage)
}

func (h *eventHistory) auditLog(c echo.Context) error {
	q, f, err := auditQuery(c, c.QueryParams())
	if err != nil {
		return err
	}
	entries, next, err := h.entries.AuditLog(c.Request().Context(), q, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"entries": mapSlice(entries, auditView), "next": next})
}

func auditView(e store.AuditEntry) views.AuditEntry {
	return views.AuditEntry{
		ID: e.ID, At: e.At, Subject: e.Subject, SubjectType: e.SubjectType, SourceIP: e.SourceIP,
		Action: e.Action, HTTPMethod: e.HTTPMethod, EntityType: e.EntityType, EntityID: e.EntityID,
		EntityName: e.EntityName, Result: e.Result, HTTPStatus: e.HTTPStatus, RequestID: e.RequestID, Changes: e.Changes,
	}
}

// eventHistoryPage is the Event history page: the audit log, filtered by subject, action,
// entity type, result and time window, newest first, paged.
func (h *eventHistory) eventHistoryPage(c echo.Context) error {
	in := c.QueryParams()
	v := url.Values{}
	var filters []string
	for _, field := range []string{"subject", "action", "entityType", "result"} {
		if x := in.Get(field); x != "" {
			op := "=@"
			if field == "result" {
				op = "=="
			}
			filters = append(filters, field+op+x)
		}
	}
	for _, k := range []string{"offset", "search"} {
		if x := in.Get(k); x != "" {
			v.Set(k, x)
		}
	}
	m := views.EventHistoryPage{Page: h.page(c, "Event history", "event-history"),
		Subject: in.Get("subject"), Action: in.Get("action"), EntityType: in.Get("entityType"), Result: in.Get("result"),
		Start: in.Get("start"), End: in.Get("end")}
	for _, k := range []string{"start", "end"} {
		if x := in.Get(k); x != "" {
			if t, err := time.ParseInLocation("2006-01-02T15:04", x, time.UTC); err == nil {
				x = t.Format(time.RFC3339) // the datetime-local inputs
			}
			v.Set(k, x)
		}
	}
	if len(filters) > 0 {
		v.Set("filterBy", strings.Join(filters, ","))
	}
	q, f, err := auditQuery(c, v)
	if err != nil {
		return err
	}
	entries, next, err := h.entries.AuditLog(c.Request().Context(), q, f)
	if err != nil {
		return err
	}
	m.Entries = mapSlice(entries, auditView)
	m.OwnOnly = f.OnlySubject != ""
	if next != nil {
		p := url.Values{}
		for k, vals := range in {
			p[k] = vals
		}
		p.Set("offset", strconv.Itoa(*next))
		m.NextHref = pathTo(c, routenames.EventHistory) + "?" + p.Encode()
	}
	if q.Offset > 0 {
		p := url.Values{}
		for k, vals := range in {
			p[k] = vals
		}
		p.Set("offset", strconv.Itoa(max(0, q.Offset-q.Limit)))
		m.PrevHref = pathTo(c, routenames.EventHistory) + "?" + p.Encode()
	}
	return render(c, http.StatusOK, views.EventHistoryView(m))
}
