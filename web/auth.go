package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// AuthStore is what login, authentication, access rules, API keys and the audit log need
// from the store.
type AuthStore interface {
	User(ctx context.Context, id uuid.UUID) (store.User, error)
	LocalUser(ctx context.Context, name string) (store.User, error)
	UpsertOIDCUser(ctx context.Context, issuer, subject, email, name string, groups []string, login bool) (store.User, error)
	TouchLogin(ctx context.Context, id uuid.UUID) error
	ReserveLoginAttempt(ctx context.Context, keys []string, delay func(failures int) time.Duration) (wait time.Duration, err error)
	ReleaseLoginAttempt(ctx context.Context, keys []string, delay func(failures int) time.Duration) error
	ClearLoginFailures(ctx context.Context, keys []string) error

	Users(ctx context.Context, q listquery.Query) ([]store.User, error)
	CountUsers(ctx context.Context, q listquery.Query) (int, error)
	CreateLocalUser(ctx context.Context, email, passwordHash string, by store.Actor) (store.User, error)
	ResetLocalPassword(ctx context.Context, id uuid.UUID, passwordHash string, at time.Time, by store.Actor) error
	SignOutUser(ctx context.Context, id uuid.UUID, at time.Time, by store.Actor) error
	DeleteUser(ctx context.Context, id uuid.UUID, bootstrapAdmin string, by store.Actor) error

	AccessRulesFor(ctx context.Context, subject, email string, groups []string) ([]store.AccessRule, error)
	AccessRules(ctx context.Context, q listquery.Query) ([]store.AccessRule, error)
	CreateAccessRule(ctx context.Context, n store.NewAccessRule, by store.Actor) (store.AccessRule, error)
	DeleteAccessRule(ctx context.Context, id uuid.UUID, by store.Actor) error
	NamedAccessRules(ctx context.Context, q listquery.Query, sel store.RuleSelection) ([]store.NamedAccessRule, int, error)
	CountNamedAccessRules(ctx context.Context, q listquery.Query, sel store.RuleSelection) (int, error)
	NamedAccessRule(ctx context.Context, number int32, sel store.RuleSelection) (store.NamedAccessRule, error)

	CheckAPIKey(ctx context.Context, id uuid.UUID, secretHash []byte) (store.APIKey, error)
	ActiveAPIKey(ctx context.Context, id uuid.UUID) (store.APIKey, error)
	APIKeys(ctx context.Context) ([]store.APIKey, error)
	CreateAPIKey(ctx context.Context, n store.NewAPIKey, by store.Actor) (store.APIKey, error)
	RevokeAPIKey(ctx context.Context, id uuid.UUID, by store.Actor) error
	ServiceAccounts(ctx context.Context) ([]store.APIKey, error)
	ServiceAccount(ctx context.Context, id uuid.UUID) (store.APIKey, error)
	SetAPIKeyEnabled(ctx context.Context, id uuid.UUID, enabled bool, by store.Actor) (store.APIKey, error)
	RegenerateKeySecret(ctx context.Context, id uuid.UUID, owner *uuid.UUID, secretHash []byte, by store.Actor) (store.APIKey, error)
	CreateAccessKey(ctx context.Context, n store.NewAccessKey, by store.Actor) (store.APIKey, error)
	AccessKeys(ctx context.Context, f store.AccessKeyFilter) ([]store.APIKey, error)
	AccessKey(ctx context.Context, owner, id uuid.UUID) (store.APIKey, error)
	DeleteAccessKey(ctx context.Context, id uuid.UUID, owner *uuid.UUID, by store.Actor) error

	AuditLog(ctx context.Context, q listquery.Query, f store.AuditFilter) ([]store.AuditEntry, *int, error)
}

// LoginConfig says how people sign in (docs/security.md "Signing in" and "Sessions").
type LoginConfig struct {
	OIDC          *auth.OIDC // nil: local login
	AdminSubjects []string   // OIDC subjects or emails that are system admins
	AdminGroups   []string   // OIDC groups whose members are system admins
	IdleTimeout   time.Duration
	Lifetime      time.Duration // absolute session timeout
	Sessions      scs.Store     // nil: in memory (tests of routing only)
	// TrustedProxies are the peers whose X-Forwarded-For and X-Forwarded-Proto are believed
	// (--trusted-proxies); empty: none, the peer's own address is the client'h.
	TrustedProxies []*net.IPNet
	// FormKey signs the login form's CSRF token; every replica must have the same one
	// (store.ServerKey). Empty: a random key for this process only.
	FormKey []byte
	// TokenKey signs the access tokens of /api/v1/token and /api/v2/token (auth.AccessTokens);
	// shared by every replica like FormKey. Empty: a random key for this process only.
	TokenKey []byte
	// AdminReady is closed once the local admin account's password is stored, which a start
	// does after the scheduler's first decision (server.bootstrapAdmin); checks of local
	// passwords wait for it. nil: nothing to wait for.
	AdminReady chan struct{}
}

// BootstrapAdmin is the local account created when no issuer is configured; it is always a
// system admin.
const BootstrapAdmin = "admin"

const (
	sessionCookie = "arbiter_session"
	sessUserID    = "uid"
	sessSignedIn  = "signed_in" // when the session began, in Unix nanoseconds (a sign-out ends those begun before it)
	sessCSRF      = "csrf"
	sessState     = "oidc_state"
	sessNonce     = "oidc_nonce"
	sessVerifier  = "oidc_verifier"
	sessNext      = "oidc_next"
	bearerKey     = "arbiter.bearer"
)

func newSessionManager(lc LoginConfig) *scs.SessionManager {
	sm := scs.New()
	if lc.Sessions != nil {
		sm.Store = lc.Sessions
	}
	sm.IdleTimeout = lc.IdleTimeout
	if sm.IdleTimeout == 0 {
		sm.IdleTimeout = 2 * time.Hour
	}
	sm.Lifetime = lc.Lifetime
	if sm.Lifetime == 0 {
		sm.Lifetime = 12 * time.Hour
	}
	sm.Cookie.Name = sessionCookie
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Persist = false // a browser session cookie; the server enforces the timeouts
	return sm
}

// sessions loads the server-side session named by the cookie and commits it (writing the
// cookie) just before the answer's headers go out. The cookie is HttpOnly, SameSite=Lax, and
// Secure when the request came over TLS or through a proxy that says it did.
func (h *signIn) sessions(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		c.Response().Header().Add("Vary", "Cookie")
		var token string
		if ck, err := r.Cookie(sessionCookie); err == nil && !isProbe(c) {
			token = ck.Value
		}
		// An empty token loads an empty session without asking the database.
		ctx, err := h.sm.Load(r.Context(), token)
		if err != nil {
			return &httpError{status: http.StatusServiceUnavailable, message: "the database is unavailable; sessions cannot be read"}
		}
		c.SetRequest(r.WithContext(ctx))
		c.Response().Before(func() { h.commitSession(c) })
		if err := next(c); err != nil {
			c.Error(err) // answer here, so the cookie goes out with the answer
		}
		return nil
	}
}

func (h *signIn) commitSession(c echo.Context) {
	ctx := c.Request().Context()
	ck := &http.Cookie{Name: sessionCookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: h.isHTTPS(c.Request())}
	switch h.sm.Status(ctx) {
	case scs.Modified:
		token, _, err := h.sm.Commit(ctx)
		if err != nil {
			h.log.Warn("session not saved", "request_id", requestID(c), "err", err)
			return
		}
		ck.Value = token
	case scs.Destroyed:
		ck.Expires, ck.MaxAge = time.Unix(1, 0), -1
	default:
		return
	}
	c.Response().Header().Add("Set-Cookie", ck.String())
	c.Response().Header().Add("Cache-Control", `no-cache="Set-Cookie"`)
}

// csrf refuses state-changing requests that do not carry the session's CSRF token (header
// X-CSRF-Token, sent by htmx on every request, or form field _csrf in the body — never the
// query string). Requests authenticated by a valid Bearer token carry no ambient credentials
// and are exempt (an Authorization header that is refused exempts nothing); every other one, including JSON API calls riding on the session cookie, is checked.
// The login form, which has no session yet, carries a signed double-submit token instead
// (loginFormValid).
func (h *signIn) csrf(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !isMutating(r.Method) || c.Get(bearerKey) == true || isTokenEndpoint(r.URL.Path) {
			return next(c)
		}
		if r.Method == http.MethodPost && r.URL.Path == pathTo(c, routenames.LoginSubmit) {
			if !h.loginFormValid(c) {
				return forbidden("this sign-in form has expired or did not come from Arbiter's console; reload the page and try again")
			}
			return next(c)
		}
		want := h.sm.GetString(r.Context(), sessCSRF)
		got := csrfFromRequest(c)
		if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			return forbidden("this form has expired or did not come from Arbiter's console; reload the page and try again")
		}
		return next(c)
	}
}

// csrfToken returns the session's CSRF token, creating it (and so the session) when needed.
func (h *signIn) csrfToken(c echo.Context) string {
	ctx := c.Request().Context()
	t := h.sm.GetString(ctx, sessCSRF)
	if t == "" {
		t = auth.RandomToken(32)
		h.sm.Put(ctx, sessCSRF, t)
	}
	return t
}

// authenticate replaces the request's identity with the caller's: from a Bearer API key or
// OIDC token, else from the session. Without credentials only public paths answer: API calls
// get 401, pages redirect to the login page.
func (h *signIn) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := h.identify(c)
		if err != nil && !isPublic(c) {
			return err
		}
		r := c.Request()
		c.SetRequest(r.WithContext(auth.WithIdentity(r.Context(), id)))
		if id.Authenticated() || isPublic(c) {
			return next(c)
		}
		if isAPI(c) || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			return unauthorized("sign in first: send a session cookie from /login or an Authorization: Bearer API key")
		}
		login := pathTo(c, routenames.Login) + "?next=" + urlQueryEscape(r.URL.RequestURI())
		if isHTMX(c) {
			c.Response().Header().Set("HX-Redirect", login)
			return unauthorized("your session has ended; sign in again")
		}
		return c.Redirect(http.StatusFound, login)
	}
}

// isProbe lists the paths that never need the caller's session: health checks, metrics and
// static files answer the same to everyone, so a cookie sent along must not make them wait on
// the database (a probe of a stalled database would otherwise hang on the session lookup).
func isProbe(c echo.Context) bool {
	p := c.Request().URL.Path
	return p == "/healthz" || p == "/readyz" || p == "/metrics" || strings.HasPrefix(p, "/static/")
}

// isPublic lists what answers without credentials: health, static files, the API description
// and the login flow.
func isPublic(c echo.Context) bool {
	p := c.Request().URL.Path
	switch p {
	case "/healthz", "/readyz", "/metrics", "/api/v1/openapi.json", "/login", "/logout", "/auth/oidc/login", "/auth/oidc/callback",
		tokenPathV1, tokenPathV2, tokenPathRevoke:
		return true
	}
	return strings.HasPrefix(p, "/static/")
}

// identify finds who calls: a Bearer token wins over the session cookie.
func (h *signIn) identify(c echo.Context) (auth.Identity, error) {
	ctx := c.Request().Context()
	if header := c.Request().Header.Get(echo.HeaderAuthorization); header != "" {
		// RFC 7235 section 2.1: the scheme is case-insensitive.
		scheme, token, ok := strings.Cut(header, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return auth.Anonymous, unauthorized("the Authorization header must be \"Bearer <API key, access token or OIDC token>\"")
		}
		id, err := h.bearerIdentity(ctx, strings.TrimSpace(token))
		if err != nil {
			// Only a valid credential makes the request an API call exempt from the CSRF
			// check: public routes (the sign-in form) go on after a refused one.
			return auth.Anonymous, err
		}
		c.Set(bearerKey, true)
		return id, nil
	}
	uid := h.sm.GetString(ctx, sessUserID)
	if uid == "" || h.users == nil {
		return auth.Anonymous, nil
	}
	id, err := uuid.Parse(uid)
	if err != nil {
		return auth.Anonymous, nil
	}
	u, err := h.users.User(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return auth.Anonymous, nil
	}
	if err != nil {
		return auth.Anonymous, err
	}
	if u.SignedInBefore(time.Unix(0, h.sm.GetInt64(ctx, sessSignedIn))) { // an admin signed the user out since
		if err := h.sm.Destroy(ctx); err != nil {
			return auth.Anonymous, err
		}
		return auth.Anonymous, nil
	}
	return h.userIdentity(ctx, u)
}

func (h *signIn) bearerIdentity(ctx context.Context, token string) (auth.Identity, error) {
	if h.users == nil {
		return auth.Anonymous, unauthorized("this server has no credential store")
	}
	if keyID, secret, ok := auth.ParseAPIKey(token); ok {
		k, err := h.checkAPIKey(ctx, keyID, secret)
		if errors.Is(err, store.ErrBadKey) {
			return auth.Anonymous, unauthorized("the API key is unknown, revoked or expired; ask an admin for a new one")
		}
		if err != nil {
			return auth.Anonymous, err
		}
		return h.keyIdentity(ctx, k)
	}
	if auth.IsAccessToken(token) {
		return h.accessTokenIdentity(ctx, token)
	}
	if h.config.OIDC == nil {
		return auth.Anonymous, unauthorized("the bearer token is not an Arbiter API key (and no OIDC issuer is configured)")
	}
	cl, err := h.config.OIDC.VerifyBearer(ctx, token)
	if err != nil {
		return auth.Anonymous, unauthorized("the bearer token is not valid for this issuer: it may have expired; get a new one")
	}
	u, err := h.users.UpsertOIDCUser(ctx, cl.Issuer, cl.Subject, cl.Email, cl.Name, cl.Groups, false)
	if err != nil {
		return auth.Anonymous, err
	}
	return h.userIdentity(ctx, u)
}

// keyIdentity is who a valid key stands for: a service account with its key's role binding,
// or the person whose access key it is, with their access rules as they are now.
func (h *signIn) keyIdentity(ctx context.Context, k store.APIKey) (auth.Identity, error) {
	if k.OwnerUserID == nil {
		return apiKeyIdentity(k), nil
	}
	u, err := h.users.User(ctx, *k.OwnerUserID)
	if errors.Is(err, store.ErrNotFound) {
		return auth.Anonymous, unauthorized("the account this access key belonged to no longer exists")
	}
	if err != nil {
		return auth.Anonymous, err
	}
	id, err := h.userIdentity(ctx, u)
	id.AccessKeyID = k.ID.String()
	return id, err
}

func apiKeyIdentity(k store.APIKey) auth.Identity {
	id := auth.Identity{Subject: k.ID.String(), SubjectType: "api-key", DisplayName: k.Name}
	return id.WithGrants([]auth.Grant{{Role: auth.Role(k.Role), Scope: scopeOf(k.ScopeType, k.ScopeID)}})
}

func scopeOf(scopeType string, scopeID *uuid.UUID) auth.Scope {
	sc := auth.Scope{Type: auth.ScopeType(scopeType)}
	if scopeID != nil {
		sc.ID = scopeID.String()
	}
	return sc
}

// userIdentity builds a person's identity: their access rules, plus system admin for the
// bootstrap account and for --admin-subjects / --admin-groups.
func (h *signIn) userIdentity(ctx context.Context, u store.User) (auth.Identity, error) {
	id := auth.Identity{Subject: u.Subject, SubjectType: "user", DisplayName: u.Name, UserID: u.ID.String(), Email: u.Email, Groups: u.Groups}
	if u.Issuer != store.LocalIssuer && u.Email != "" {
		id.Subject = u.Email
	}
	if id.DisplayName == "" {
		id.DisplayName = id.Subject
	}
	rules, err := h.users.AccessRulesFor(ctx, u.Subject, u.Email, u.Groups)
	if err != nil {
		return auth.Anonymous, err
	}
	var grants []auth.Grant
	for _, r := range rules {
		grants = append(grants, auth.Grant{Role: auth.Role(r.Role), Scope: scopeOf(r.ScopeType, r.ScopeID)})
	}
	if h.isConfiguredAdmin(u) {
		grants = append(grants, auth.Grant{Role: auth.RoleAdmin, Scope: auth.System})
	}
	return id.WithGrants(grants), nil
}

func (h *signIn) isConfiguredAdmin(u store.User) bool {
	if u.Issuer == store.LocalIssuer {
		return u.Subject == BootstrapAdmin
	}
	for _, a := range h.config.AdminSubjects {
		if a == u.Subject || (u.Email != "" && strings.EqualFold(a, u.Email)) {
			return true
		}
	}
	for _, g := range u.Groups {
		for _, a := range h.config.AdminGroups {
			if a == g {
				return true
			}
		}
	}
	return false
}

// authorize is the one authorization check every handler makes: 401 without credentials,
// 403 (saying what was refused) when no grant of the caller allows action at scope.
func authorize(c echo.Context, action auth.Action, scope auth.Scope, what string) error {
	switch r := auth.Refuse(identity(c), action, scope, what); {
	case r == nil:
		return nil
	case r.SignIn:
		return unauthorized("%s", r.Sentence)
	default:
		return forbidden("%s", r.Sentence)
	}
}

// can says whether the caller may take action at scope: pages use it to hide what the server
// would refuse anyway, and lists to show only what the caller may see (can(c, auth.Read, ...)).
func can(c echo.Context, action auth.Action, scope auth.Scope) bool {
	return auth.Allowed(identity(c), action, scope)
}

// requireAdmin refuses callers that are not system admins (authorize with ManageSystem).
func requireAdmin(c echo.Context, what string) error {
	return authorize(c, auth.ManageSystem, auth.System, what)
}

func identity(c echo.Context) auth.Identity {
	id, ok := auth.FromContext(c.Request().Context())
	if !ok {
		return auth.Anonymous
	}
	return id
}
