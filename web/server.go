// Package web serves the console's pages and the REST API with Echo. Handlers depend on
// small interfaces, render into a buffer before writing, and map every error in one place.
package web

import (
	"bytes"
	"context"
	"github.com/arbiterhq/arbiter/internal/apiversion"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/static"
	"github.com/arbiterhq/arbiter/store"
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
	Cycles    LastCycle       // the scheduler's last cycle; nil: no cluster (Nodes says so)
	Pods      WorkloadPods    // a workload's pods from the scheduler's last cycle; nil: no cluster
	Cluster   ClusterStatus   // which replica leads, whether the API server answers; nil: no cluster
	// Foresee is the dry run of a submission; nil: no cluster. The submission
	// routes' ?dryRun=true answers NewPredictionJSON(Foresee.DryRun(...)).
	Foresee WorkloadForesight
	// DryRuns bounds the dry runs running at once in this replica, in all and per caller;
	// nil: NewDryRunLimits(DefaultDryRunsPerReplica, DefaultDryRunsPerCaller).
	DryRuns *DryRunLimits
	// Estimating says a scheduler makes start estimates (a cluster is connected); the
	// estimates themselves are in the workload records, the same on every replica.
	Estimating bool
	// Standings are what a change of a running workload's preemptibility is checked against
	// (S14); nil: no cluster.
	Standings PreemptibilityStandings

	// Submitter creates submitted workloads in the cluster; nil: no cluster (submissions
	// answer 503). Submissions records them (the store).
	Submitter   WorkloadSubmitter
	Submissions SubmissionStore

	// Metrics, if set, answers GET /metrics (Prometheus) without sign-in; nil when they are
	// served on a listener of their own (--metrics-addr).
	Metrics http.Handler
	// Requests, if set, hears of every request once answered (the HTTP metrics).
	Requests RequestObserver
	// Refusals, if set, counts every refused request (refusals.go); their audit rows are
	// sampled either way.
	Refusals RefusalCounter
	// ClusterID is the installation's one cluster's id (store.Store.ClusterID), which
	// Run:ai-shaped answers carry and requests may name; empty: store.DefaultClusterID.
	ClusterID string
	// Usage is the usage history (the charts, the fairness ledger, the metrics routes) and the
	// consumption reports; nil: none recorded (empty charts and ledger; the API's routes of
	// usage over time answer 503).
	Usage UsageStore
	// UsageRetention is how long the history keeps each level (what its routes can answer);
	// zero: store.DefaultUsageRetention.
	UsageRetention store.UsageRetention
}

// RequestObserver hears of each request: the route's path template (empty when none matched),
// the method, the status answered and the time taken.
type RequestObserver interface {
	Request(route, method string, status int, took time.Duration)
}

// ClusterStatus is what every page's frame says about the cluster connection: a banner while
// the API server does not answer, and which replica leads under leader election.
type ClusterStatus interface {
	// UnreachableSince is when the API server stopped answering; zero while it answers.
	UnreachableSince() time.Time
	// Leader is the replica holding the lease and this replica's identity; both empty
	// without leader election.
	Leader() (leader, self string)
}

// Server is the router: Echo with the middleware every request goes through and each
// feature's handler registered on it.
type Server struct {
	*echo.Echo
	layout // for error pages
	signIn *signIn
	audit  AuditStore
	ready  func(ctx context.Context) error
	log    *slog.Logger
	// requests hears of every request (metrics); never nil.
	requests RequestObserver
	// refusals counts refused requests and writes their sampled audit rows.
	refusals *refusalLog
}

type noRequestObserver struct{}

func (noRequestObserver) Request(string, string, int, time.Duration) {}

// New builds the router with every route, middleware and the error handler.
func New(d Deps) *Server {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	pcs := d.PriorityCls
	if pcs == nil {
		pcs = unknownPriorityClasses{}
	}
	refusals := newRefusalLog(d.Audit, d.Refusals, log)
	si := newSignIn(d, log, refusals)
	s := &Server{Echo: e, layout: si.layout, signIn: si, audit: d.Audit, ready: d.Ready, log: log, requests: d.Requests, refusals: refusals}
	if s.requests == nil {
		s.requests = noRequestObserver{}
	}
	e.IPExtractor = ipExtractor(d.Login.TrustedProxies)
	e.HTTPErrorHandler = s.handleError
	e.Use(middleware.RequestIDWithConfig(middleware.RequestIDConfig{TargetHeader: echo.HeaderXRequestID}))
	e.Use(answerAPIVersion)
	e.Use(s.logRequests)
	e.Use(middleware.Recover())
	e.Use(securityHeaders(si.isHTTPS))
	e.Use(middleware.BodyLimit("1M"))
	e.Use(si.sessions)
	e.Use(s.auditFailures)
	e.Use(si.authenticate)
	e.Use(si.csrf)
	e.Use(checkInput)
	cluster := d.ClusterID
	if cluster == "" {
		cluster = store.DefaultClusterID.String()
	}
	d.ClusterID = cluster
	e.Use(withClusterID(cluster))

	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/readyz", s.readyz)
	if d.Metrics != nil {
		e.GET("/metrics", echo.WrapHandler(d.Metrics))
	}
	e.StaticFS("/static", static.Files)

	taken := map[string]bool{}
	r := router{api: routes{to: e.Group("/api/v1"), prefix: "/api/v1", taken: taken}, pages: routes{to: e, taken: taken},
		apiV2: routes{to: e.Group("/api/v2"), prefix: "/api/v2", taken: taken}}
	r.api.GET("/openapi.json", serveOpenAPI)
	org := newOrganization(d)
	prios := priorityDictionary{store: d.Properties, clusters: pcs}
	service := newWorkloadService(d, log)
	keep := d.UsageRetention
	if keep == (store.UsageRetention{}) {
		keep = store.DefaultUsageRetention
	}
	for _, h := range []handler{
		si,
		&workloadProperties{props: d.Properties, prios: prios, layout: s.layout},
		&nodePools{org: org, cycles: d.Cycles, layout: s.layout},
		&networkTopologies{org: org},
		&clusters{org: d.Organization},
		&departments{org: org, layout: s.layout},
		&projects{org: org, prios: prios, layout: s.layout},
		&workloadRecords{service: service, pods: d.Pods, status: org.status, exports: make(chan struct{}, csvExportSlots), log: log, estimating: estimating(d.Estimating), layout: s.layout},
		&access{users: d.Users, keys: &si.keys, org: d.Organization, layout: s.layout},
		&runAIUsers{users: d.Users, passwords: si.passwords, localSignIn: d.Login.OIDC == nil},
		&runAIAuthorization{users: d.Users, org: d.Organization},
		newOverview(d, org, service, s.layout),
		&nodes{cycles: d.Cycles, workloads: service, projects: d.Organization, layout: s.layout},
		newEventHistory(d, service, s.layout),
		&workloadStory{service: service, status: org.status, pods: d.Pods, estimating: estimating(d.Estimating), layout: s.layout},
		&submissions{service: service, pods: d.Pods},
		&workloadReads{service: service, pods: d.Pods, cycles: d.Cycles},
		&workloadsV2{service: service},
		&submitPage{service: service, log: log, layout: s.layout},
		newUsagePages(d, org, s.layout),
		&usageMetrics{usage: d.Usage, keep: keep, org: org}, newUsageReports(d.Usage, keep, org), &usageAPI{usage: d.Usage, keep: keep, org: org},
	} {
		h.routes(r)
	}
	return s
}

// A handler is one feature of the console and the API (workload properties, node pools,
// departments, projects, workloads, access, event history, sign-in): it owns its dependencies
// and registers its own routes (as pagoda's pkg/handlers do).
type handler interface {
	routes(r router)
}

// router is where handlers register their routes: the API under /api/v1 (and Run:ai's few
// /api/v2 routes under apiV2), the pages at the root. Page routes are named (routenames), and
// links to them are built with pathTo or views.URL, so that a page's path is written once.
type router struct {
	api   routes
	apiV2 routes
	pages routes
}

func (r router) page(method, path, name string, h echo.HandlerFunc) {
	r.pages.Add(method, path, h).Name = name
}

// routes registers handlers under a prefix and refuses a method and path registered twice:
// Echo would keep the later handler without a word, so that the order of the handler list
// decided what a route does.
type routes struct {
	to interface {
		Add(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	}
	prefix string
	taken  map[string]bool // method and full path; shared by every group of one server
}

func (r routes) Add(method, path string, h echo.HandlerFunc) *echo.Route {
	key := method + " " + r.prefix + path
	if r.taken[key] {
		panic("web: route " + key + " registered twice")
	}
	r.taken[key] = true
	return r.to.Add(method, path, h)
}

func (r routes) GET(path string, h echo.HandlerFunc) *echo.Route {
	return r.Add(http.MethodGet, path, h)
}

func (r routes) POST(path string, h echo.HandlerFunc) *echo.Route {
	return r.Add(http.MethodPost, path, h)
}

func (r routes) PUT(path string, h echo.HandlerFunc) *echo.Route {
	return r.Add(http.MethodPut, path, h)
}

func (r routes) PATCH(path string, h echo.HandlerFunc) *echo.Route {
	return r.Add(http.MethodPatch, path, h)
}

func (r routes) DELETE(path string, h echo.HandlerFunc) *echo.Route {
	return r.Add(http.MethodDelete, path, h)
}

// pathTo is the path of the named route with params in place of its ":name" segments.
func pathTo(c echo.Context, name string, params ...any) string {
	return c.Echo().Reverse(name, params...)
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
// other headers of docs/security.md "CSRF and headers" on every answer. Nothing but the static files may be stored by
// a browser or a proxy cache: pages and API answers are a signed-in person's view, and some
// carry a secret (a new API key) or a CSRF token. Over HTTPS (TLS, or a trusted proxy's
// X-Forwarded-Proto: https) browsers are told to use nothing else for a year; over plain HTTP
// the header would be ignored at best, so it is not sent.
func securityHeaders(isHTTPS func(*http.Request) bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			if isHTTPS(c.Request()) {
				h.Set("Strict-Transport-Security", "max-age=31536000")
			}
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
}

func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		took := time.Since(start)
		s.requests.Request(c.Path(), c.Request().Method, c.Response().Status, took)
		s.log.Debug("request", "request_id", requestID(c), "method", c.Request().Method, "path", c.Request().URL.Path,
			"status", c.Response().Status, "duration", took)
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
	if err := comp.Render(views.WithRouter(c.Request().Context(), c.Echo()), &buf); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// layout fills the page frame every page renders into (views.Page); each page handler has one.
type layout struct {
	csrfToken func(echo.Context) string // the session's CSRF token, made on first use
	cluster   ClusterStatus             // nil: no cluster
	forms     formSigner                // the server's form key: signs a page's flash (flash.go)
}

// page fills the frame's fields for a request.
func (l layout) page(c echo.Context, title, nav string) views.Page {
	id := identity(c)
	p := views.Page{Title: title, Nav: nav, CanAdmin: can(c, auth.ManageSystem, auth.System),
		CanSubmit: auth.AllowedSomewhere(id, auth.SubmitWorkload)}
	if l.cluster != nil {
		if since := l.cluster.UnreachableSince(); !since.IsZero() {
			p.Banner = "The cluster is unreachable since " + since.Format("15:04:05 MST") +
				". Arbiter schedules nothing until the API server answers again, then carries on by itself."
		}
		p.Leader, p.Self = l.cluster.Leader()
	}
	if id.Authenticated() {
		p.User, p.Role = id.DisplayName, id.Role
		if p.Role == "" {
			p.Role = "no role"
		}
		if c.Get(bearerKey) != true {
			p.CSRFToken = l.csrfToken(c)
		}
	}
	return p
}

func isHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// answerAPIVersion names the API revision on every answer, so the command line can say whether
// it or the server is the older one.
func answerAPIVersion(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(apiversion.Header, strconv.Itoa(apiversion.Current))
		return next(c)
	}
}
