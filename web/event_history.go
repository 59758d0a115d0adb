package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/workloads"
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

// SchedulingEventStore lists workloads' scheduling events (Preempted, Reclaimed, Suspended,
// Resumed, PriorityChanged) for the Event history; *store.Store is one.
type SchedulingEventStore interface {
	SchedulingEvents(ctx context.Context, f store.SchedulingEventFilter) ([]store.SchedulingEvent, bool, error)
}

// eventHistory is the audit log (/api/v1/audit/log and the Event history page) and, beside it
// on the page, the scheduling events of the workloads the caller may see.
type eventHistory struct {
	entries interface {
		AuditLog(ctx context.Context, q listquery.Query, f store.AuditFilter) ([]store.AuditEntry, *int, error)
	}
	events    SchedulingEventStore // nil: the server keeps no workload records
	workloads *workloads.Service   // who may see which workloads (as the API)
	layout
}

// newEventHistory builds the Event history from Deps: the workload store lists the
// scheduling events when it can (the store does).
func newEventHistory(d Deps, service *workloads.Service, l layout) *eventHistory {
	h := &eventHistory{entries: d.Users, workloads: service, layout: l}
	h.events, _ = d.Workloads.(SchedulingEventStore)
	return h
}

func (h *eventHistory) routes(r router) {
	r.api.GET("/audit/log", h.auditLog)
	r.page(http.MethodGet, "/event-history", routenames.EventHistory, h.eventHistoryPage)
}

func (h *eventHistory) auditLog(c echo.Context) error {
	q, f, err := auditQuery(c, runAIAuditQuery(c.QueryParams()))
	if err != nil {
		return err
	}
	entries, next, err := h.entries.AuditLog(c.Request().Context(), q, f)
	if err != nil {
		return err
	}
	// logs is Run:ai's shape of the page; entries is Arbiter's, kept for the scripts that read
	// it (Run:ai's schema allows fields beside its own). next is absent on the last page.
	answer := map[string]any{"logs": mapSlice(entries, func(e store.AuditEntry) runAIAuditEntry { return runAIAuditView(e, clusterID(c)) }), "entries": mapSlice(entries, auditView)}
	if next != nil {
		answer["next"] = *next
	}
	return c.JSON(http.StatusOK, answer)
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
	if in.Get("tab") == "scheduling" {
		return h.schedulingPage(c)
	}
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
	m := views.EventHistoryPage{Page: h.page(c, "Event history", "event-history"), Tab: "audit",
		AuditHref: pathTo(c, routenames.EventHistory), SchedulingHref: pathTo(c, routenames.EventHistory) + "?tab=scheduling",
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
	if err := h.nameAPIKeys(c.Request().Context(), m.Entries); err != nil {
		return err
	}
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

// apiKeyNamer names API keys by id; *store.Store is one.
type apiKeyNamer interface {
	APIKeyNames(ctx context.Context, ids []string) (map[string]string, error)
}

// nameAPIKeys gives the rows whose subject is an API key the key's name (revoked keys too),
// so the page says which service acted rather than only the key's id.
func (h *eventHistory) nameAPIKeys(ctx context.Context, entries []views.AuditEntry) error {
	namer, ok := h.entries.(apiKeyNamer)
	if !ok {
		return nil
	}
	var ids []string
	for _, e := range entries {
		if e.SubjectType == "api-key" && !slices.Contains(ids, e.Subject) {
			ids = append(ids, e.Subject)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	names, err := namer.APIKeyNames(ctx, ids)
	if err != nil {
		return err
	}
	for i, e := range entries {
		if e.SubjectType == "api-key" {
			entries[i].SubjectName = names[e.Subject]
		}
	}
	return nil
}

// schedulingPageSize is how many scheduling events a page of the Event history shows.
const schedulingPageSize = 50

// schedulingPage is the Event history's scheduling events, filtered by kind, project and
// workload (a UID or part of a name), newest first, paged; only the workloads the caller may
// see (as GET /api/v1/workloads).
func (h *eventHistory) schedulingPage(c echo.Context) error {
	in := c.QueryParams()
	base := pathTo(c, routenames.EventHistory)
	m := views.EventHistoryPage{Page: h.page(c, "Event history", "event-history"), Tab: "scheduling",
		AuditHref: base, SchedulingHref: base + "?tab=scheduling"}
	s := views.SchedulingEventsView{Kinds: store.SchedulingKinds, Kind: in.Get("kind"), Project: in.Get("project"), Workload: strings.TrimSpace(in.Get("workload"))}
	if s.Kind != "" && !slices.Contains(store.SchedulingKinds, s.Kind) {
		return badField("kind", "kind %q is not a scheduling event; use one of: %s", s.Kind, strings.Join(store.SchedulingKinds, ", "))
	}
	offset, _ := strconv.Atoi(in.Get("offset"))
	offset = max(0, offset)
	if h.events == nil || !h.workloads.HasRecords() {
		m.Scheduling = s
		return render(c, http.StatusOK, views.EventHistoryView(m))
	}
	ctx := c.Request().Context()
	scope, err := h.workloads.Scope(ctx, identity(c))
	if err != nil {
		return err
	}
	if scope.All {
		refs, err := h.workloads.ProjectRefs(ctx)
		if err != nil {
			return err
		}
		s.Projects = mapSlice(refs, func(p store.ProjectRef) string { return p.Name })
	} else {
		s.Projects = scope.Names()
	}
	evs, more, err := h.events.SchedulingEvents(ctx, store.SchedulingEventFilter{Kind: s.Kind, Project: s.Project,
		Workload: s.Workload, Scope: scope, Limit: schedulingPageSize, Offset: offset})
	if err != nil {
		return err
	}
	for _, e := range evs {
		row := views.SchedulingEventRow{At: e.At, Kind: e.Kind, Project: e.ProjectName, Message: e.Message,
			Workload: views.WorkloadLink{ID: e.WorkloadUID, Name: e.Namespace + "/" + e.Name}}
		if e.Kind == "Preempted" || e.Kind == "Reclaimed" {
			row.Rule = e.Reason
		}
		if e.Actor != "scheduler" && !strings.Contains(e.Message, e.Actor) {
			row.Actor = e.Actor
		}
		if e.PreemptorUID != "" {
			l := &views.WorkloadLink{Name: cmpOr(e.PreemptorName, preemptorName(e.Message))}
			if e.PreemptorName != "" && scope.Includes(e.PreemptorProjectID) {
				l.ID = e.PreemptorUID
			}
			row.Preemptor = l
		}
		s.Events = append(s.Events, row)
	}
	page := func(off int) string {
		p := url.Values{}
		for k, vals := range in {
			p[k] = vals
		}
		p.Set("offset", strconv.Itoa(off))
		return base + "?" + p.Encode()
	}
	if more {
		s.NextHref = page(offset + schedulingPageSize)
	}
	if offset > 0 {
		s.PrevHref = page(max(0, offset-schedulingPageSize))
	}
	m.Scheduling = s
	return render(c, http.StatusOK, views.EventHistoryView(m))
}
