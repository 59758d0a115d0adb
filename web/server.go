// Package web serves the console's pages and the REST API with Echo. Handlers depend on
// small interfaces, render into a buffer before writing, and map every error in one place.
package web

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/alexedwards/scs/v2"
	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/static"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// PriorityClassStatus reports whether a dictionary entry's PriorityClass matches in the
// cluster: "Synced", "Drifted" or "Unknown" (before the scheduler has looked).
type PriorityClassStatus interface {
	PriorityClassStatus(name string) string
}

type unknownPriorityClasses struct{}

func (unknownPriorityClasses) PriorityClassStatus(string) string { return "Unknown" }

// Deps are what the web layer needs from the rest of Arbiter.
type Deps struct {
	Properties  WorkloadPropertiesStore
	Audit       AuditStore
	Ready       func(ctx context.Context) error // nil error when the database answers
	PriorityCls PriorityClassStatus
	Log         *slog.Logger
	Users       AuthStore   // users, access rules, API keys, login throttling, the audit log
	Login       LoginConfig // how people sign in; sessions

	Organization OrganizationStore
	OrgStatus    OrgStatusSource // live usage from the scheduler; nil: zeros

	Workloads WorkloadStore   // the scheduler's workload records and history
	Labeler   WorkloadLabeler // labels workloads in the cluster; nil: no cluster (PATCH answers 503)
}

// Server holds the Echo instance and the dependencies of its handlers.
type Server struct {
	*echo.Echo
	props WorkloadPropertiesStore
	// typesCache holds encoded workload-type lists between configuration changes.
	typesCache responseCache
	audit      AuditStore
	ready      func(ctx context.Context) error
	pcs        PriorityClassStatus
	log        *slog.Logger
	users      AuthStore
	login      LoginConfig
	sm         *scs.SessionManager
	org        organization
	wl         workloads
	keys       keyCache // API keys validated in the last few seconds
	passwords  *passwordChecker
	forms      formSigner // signs the login form's CSRF token
}

// New builds the router with every route, middleware and the error handler.
func New(d Deps) *Server {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	s := &Server{Echo: e, props: d.Properties, audit: d.Audit, ready: d.Ready, pcs: d.PriorityCls, log: d.Log,
		users: d.Users, login: d.Login, sm: newSessionManager(d.Login),
		passwords: newPasswordChecker(), forms: newFormSigner(d.Login.FormKey)}
	e.IPExtractor = ipExtractor(d.Login.TrustedProxies)
	s.org = newOrganization(d)
	s.wl = newWorkloads(d)
	if s.pcs == nil {
		s.pcs = unknownPriorityClasses{}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	e.HTTPErrorHandler = s.handleError
	e.Use(middleware.RequestIDWithConfig(middleware.RequestIDConfig{TargetHeader: echo.HeaderXRequestID}))
	e.Use(s.logRequests)
	e.Use(middleware.Recover())
	e.Use(securityHeaders)
	e.Use(middleware.BodyLimit("1M"))
	e.Use(s.sessions)
	e.Use(s.auditFailures)
	e.Use(s.authenticate)
	e.Use(s.csrf)
	e.Use(checkInput)

	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/readyz", s.readyz)
	e.StaticFS("/static", static.Files)

	api := e.Group("/api/v1")
	api.GET("/openapi.json", serveOpenAPI)
	s.routeWorkloadProperties(api)
	s.routeNodePools(api, e)
	s.routeDepartments(api, e)
	s.routeProjects(api, e)
	s.routeWorkloads(api)
	s.routeAuthAPI(api)

	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusFound, "/workload-types") })
	s.routeWorkloadPropertyPages(e)
	s.routeLogin(e)
	s.routeAuthPages(e)
	return s
}

// readyTimeout bounds /readyz's ping, well under a probe's usual timeout, so a stalled
// database makes it answer 503 rather than hang.
const readyTimeout = 2 * time.Second

func (s *Server) readyz(c echo.Context) error {
	if s.ready != nil {
		ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
		defer cancel()
		if err := s.ready(ctx); err != nil {
			return &httpError{status: http.StatusServiceUnavailable, message: "not ready: the database does not answer"}
		}
	}
	return c.String(http.StatusOK, "ready")
}

// securityHeaders sets a strict Content-Security-Policy (no inline script or style) and the
// other headers of security.md on every answer. Nothing but the static files may be stored by
// a browser or a proxy cache: pages and API answers are a signed-in person's view, and some
// carry a secret (a new API key) or a CSRF token.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		if !strings.HasPrefix(c.Request().URL.Path, "/static/") {
			h.Set("Cache-Control", "no-store")
		}
		return next(c)
	}
}

func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		s.log.Debug("request", "request_id", requestID(c), "method", c.Request().Method, "path", c.Request().URL.Path,
			"status", c.Response().Status, "duration", time.Since(start))
		return nil
	}
}

func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}

// render writes a templ component only once it has rendered whole, so a failure becomes an
// error page rather than half a page with a 200.
func render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// page fills the layout's fields for a request.
func (s *Server) page(c echo.Context, title, nav string) views.Page {
	id := identity(c)
	p := views.Page{Title: title, Nav: nav, CanAdmin: can(c, auth.ManageSystem, auth.System)}
	if id.Authenticated() {
		p.User, p.Role = id.DisplayName, id.Role
		if p.Role == "" {
			p.Role = "no role"
		}
		if c.Get(bearerKey) != true {
			p.CSRFToken = s.csrfToken(c)
		}
	}
	return p
}

func isHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }
