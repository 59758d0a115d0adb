package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// signIn is the sign-in feature: the login page (local accounts and OIDC), sign-out, and the
// middleware that knows who is calling (sessions, API keys and OIDC tokens, CSRF checks;
// auth.go), which shares the sessions and keys with it.
type signIn struct {
	users     AuthStore
	config    LoginConfig
	sm        *scs.SessionManager
	keys      keyCache // API keys validated in the last few seconds
	passwords *passwordChecker
	forms     formSigner // signs the login form's CSRF token
	tokens    auth.AccessTokens
	audit     AuditStore
	refusals  *refusalLog // sign-ins of no real account, throttled ones: counted, rows sampled
	log       *slog.Logger
	layout
}

func newSignIn(d Deps, log *slog.Logger, refusals *refusalLog) *signIn {
	h := &signIn{users: d.Users, config: d.Login, sm: newSessionManager(d.Login), passwords: newPasswordChecker(),
		forms: newFormSigner(d.Login.FormKey), tokens: auth.NewAccessTokens(d.Login.TokenKey), audit: d.Audit, refusals: refusals, log: log}
	h.layout = layout{csrfToken: h.csrfToken, cluster: d.Cluster, forms: h.forms}
	return h
}

func (h *signIn) routes(r router) {
	r.page(http.MethodGet, "/login", routenames.Login, h.loginPage)
	r.page(http.MethodPost, "/login", routenames.LoginSubmit, h.localLogin)
	r.page(http.MethodPost, "/logout", routenames.Logout, h.logout)
	r.page(http.MethodGet, "/auth/oidc/login", routenames.OIDCLogin, h.oidcStart)
	r.page(http.MethodGet, "/auth/oidc/callback", routenames.OIDCCallback, h.oidcCallback)
	r.pages.POST(tokenPathV1, h.tokenV1) // Run:ai's token endpoints (tokens.go)
	r.pages.POST(tokenPathV2, h.tokenV2)
	r.pages.POST(tokenPathRevoke, h.revokeRefreshToken) // tokens_refresh.go
}

// loginThrottle is how long an account or address waits after its nth failed login in an
// hour: the first three are free, then 2 s, 4 s, 8 s ... up to 15 minutes.
func loginThrottle(failures int) time.Duration {
	if failures < 3 {
		return 0
	}
	d := time.Duration(math.Pow(2, float64(min(failures-2, 20)))) * time.Second
	return min(d, 15*time.Minute)
}

func (h *signIn) loginPage(c echo.Context) error {
	if identity(c).Authenticated() {
		return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
	}
	return h.renderLogin(c, http.StatusOK, "", "")
}

// renderLogin shows the sign-in page. It stores no session: the form's CSRF token is the
// signed double-submit token of loginFormToken.
func (h *signIn) renderLogin(c echo.Context, status int, username, message string) error {
	m := views.LoginPage{
		Page:     h.page(c, "Sign in", ""),
		OIDC:     h.config.OIDC != nil,
		Next:     safeNext(c.QueryParam("next")),
		Username: username,
		Error:    message,
	}
	if c.Request().Method == http.MethodPost {
		m.Next = safeNext(c.Request().PostFormValue("next"))
	}
	if !m.OIDC && m.CSRFToken == "" {
		m.CSRFToken = h.loginFormToken(c)
	}
	return render(c, status, views.LoginView(m))
}

// safeNext keeps redirects after login inside the console: next must be a plain path on this
// origin, else "/". Browsers drop tabs and newlines from URLs and read "\" as "/", so
// "/\t/evil.example" or "/\\evil.example" would lead to //evil.example: control characters
// and backslashes are refused, raw or percent-encoded, and so is a path that starts with "//"
// before or after decoding.
func safeNext(next string) string {
	if next == "" || len(next) > 2048 || hasUnsafeChar(next) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || u.User != nil || hasUnsafeChar(u.Path) {
		return "/"
	}
	for _, p := range []string{u.EscapedPath(), u.Path} {
		if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/login") {
			return "/"
		}
	}
	return next
}

func hasUnsafeChar(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' })
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// localLogin signs a local account in with its password (checkLocalPassword: throttled and
// bounded).
func (h *signIn) localLogin(c echo.Context) error {
	markAudited(c)
	if h.config.OIDC != nil {
		return h.renderLogin(c, http.StatusBadRequest, "", "Local sign-in is off: this console signs people in with its identity provider.")
	}
	r := c.Request()
	name := strings.TrimSpace(r.PostFormValue("username"))
	res, err := h.checkLocalPassword(c, name, r.PostFormValue("password"))
	if err != nil {
		return err
	}
	switch {
	case res.wait > 0:
		secs := int(math.Ceil(res.wait.Seconds()))
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
		h.refusals.refused(c, refusedThrottled, "", h.loginEntry(c, "login", name, "", "denied", http.StatusTooManyRequests, map[string]any{"error": "too many failed sign-ins"}))
		return h.renderLogin(c, http.StatusTooManyRequests, name,
			fmt.Sprintf("Too many failed sign-ins for this account or address. Wait %d seconds and try again.", secs))
	case res.busy:
		secs := int(passwordSlotWait / time.Second)
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
		h.refusals.refused(c, refusedBusy, "", h.loginEntry(c, "login", name, "", "failure", http.StatusServiceUnavailable, map[string]any{"error": "server busy checking other sign-ins"}))
		return h.renderLogin(c, http.StatusServiceUnavailable, name,
			fmt.Sprintf("The server is busy checking other sign-ins. Wait %d seconds and try again.", secs))
	case !res.ok && !res.known:
		h.refusals.refused(c, refusedUnknownAccount, "", h.loginEntry(c, "login", name, "", "failure", http.StatusUnauthorized, map[string]any{"error": "no such account"}))
		return h.renderLogin(c, http.StatusUnauthorized, name, "The user name or password is not right.")
	case !res.ok:
		h.auditLogin(c, "login", name, res.user.ID.String(), "failure", http.StatusUnauthorized, map[string]any{"error": "wrong user name or password"})
		return h.renderLogin(c, http.StatusUnauthorized, name, "The user name or password is not right.")
	}
	h.forgetLoginForm(c)
	return h.startSession(c, res.user, safeNext(r.PostFormValue("next")))
}

// passwordCheck is what checkLocalPassword found: throttled (wait > 0) or busy, and nothing
// was checked; or the password was checked and is right (ok) or not. known says the account
// exists (user is it): a failed sign-in of a real account is audited row by row, one of no
// account is counted and sampled (refusals.go).
type passwordCheck struct {
	user  store.User
	known bool
	ok    bool
	wait  time.Duration
	busy  bool
}

// checkLocalPassword checks a local account's password for the login form and the token
// endpoint's password grant alike. The attempt is counted per account and per address before
// the password is checked (ReserveLoginAttempt decides atomically), so parallel attempts
// cannot slip past the throttle; after three failures each further attempt waits longer
// (loginThrottle). The check itself runs in one of a few slots (passwordChecker). An unknown
// account costs the same work as a real one.
func (h *signIn) checkLocalPassword(c echo.Context, name, password string) (passwordCheck, error) {
	ctx := c.Request().Context()
	keys := []string{"account:" + strings.ToLower(name), "address:" + c.RealIP()}
	wait, err := h.users.ReserveLoginAttempt(ctx, keys, loginThrottle)
	if err != nil {
		return passwordCheck{}, err
	}
	if wait > 0 {
		return passwordCheck{wait: wait}, nil
	}
	checked := false
	defer func() {
		if !checked { // give back an attempt whose password was never checked
			if err := h.users.ReleaseLoginAttempt(context.WithoutCancel(ctx), keys, loginThrottle); err != nil {
				h.log.Warn("sign-in attempt not given back", "request_id", requestID(c), "err", err)
			}
		}
	}()
	if ready := h.config.AdminReady; ready != nil {
		select { // the admin's password may still be on its way to the database
		case <-ready:
		case <-ctx.Done():
			return passwordCheck{}, ctx.Err()
		}
	}
	u, err := h.users.LocalUser(ctx, name)
	known := err == nil
	hash := u.PasswordHash
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotFound):
		hash = dummyHash() // the same work as for a real account
	default:
		return passwordCheck{}, err
	}
	ok, err := h.passwords.check(ctx, hash, password)
	switch {
	case errors.Is(err, errBusy):
		return passwordCheck{busy: true}, nil
	case ctx.Err() != nil:
		return passwordCheck{}, ctx.Err()
	}
	checked = true
	if !ok || u.PasswordHash == "" {
		return passwordCheck{user: u, known: known}, nil
	}
	if err := h.users.ClearLoginFailures(ctx, keys); err != nil {
		return passwordCheck{}, err
	}
	return passwordCheck{user: u, known: true, ok: true}, nil
}

// dummyHash is made on first use, not when the package loads: an argon2id hash takes 64 MiB
// and a few hundred milliseconds of CPU, which every start of the binary paid before doing
// anything (the scheduler's first bind, or a CLI command). Only the first sign-in with an
// unknown name pays it, once per process.
var dummyHash = sync.OnceValue(func() string {
	h, _ := auth.HashPassword("not a password anyone uses")
	return h
})

// startSession signs u in: a new session id (so a planted one is useless), a new CSRF token,
// and an audit row.
func (h *signIn) startSession(c echo.Context, u store.User, next string) error {
	ctx := c.Request().Context()
	if err := h.sm.RenewToken(ctx); err != nil {
		return err
	}
	h.sm.Put(ctx, sessUserID, u.ID.String())
	h.sm.Put(ctx, sessSignedIn, time.Now().UnixNano())
	h.sm.Put(ctx, sessCSRF, auth.RandomToken(32))
	_ = h.users.TouchLogin(ctx, u.ID)
	id, err := h.userIdentity(ctx, u)
	if err != nil {
		return err
	}
	c.SetRequest(c.Request().WithContext(auth.WithIdentity(ctx, id)))
	h.auditLogin(c, "login", id.Subject, u.ID.String(), "success", http.StatusSeeOther, map[string]any{"role": id.Role})
	return c.Redirect(http.StatusSeeOther, next)
}

func (h *signIn) logout(c echo.Context) error {
	markAudited(c)
	id := identity(c)
	if id.Authenticated() && c.Get(bearerKey) != true {
		h.auditLogin(c, "logout", id.Subject, id.UserID, "success", http.StatusSeeOther, map[string]any{})
		if err := h.sm.Destroy(c.Request().Context()); err != nil {
			return err
		}
	}
	return c.Redirect(http.StatusSeeOther, pathTo(c, routenames.Login))
}

// oidcStart sends the browser to the provider with a fresh state, nonce and PKCE verifier,
// kept in the session until the callback.
func (h *signIn) oidcStart(c echo.Context) error {
	if h.config.OIDC == nil {
		return c.Redirect(http.StatusFound, pathTo(c, routenames.Login))
	}
	ctx := c.Request().Context()
	state, nonce, verifier := auth.RandomToken(24), auth.RandomToken(24), auth.NewVerifier()
	h.sm.Put(ctx, sessState, state)
	h.sm.Put(ctx, sessNonce, nonce)
	h.sm.Put(ctx, sessVerifier, verifier)
	h.sm.Put(ctx, sessNext, safeNext(c.QueryParam("next")))
	return c.Redirect(http.StatusFound, h.config.OIDC.AuthCodeURL(state, nonce, verifier))
}

// oidcCallback finishes the authorization code flow. Every failure is told to the person as a
// sentence on the login page (and written to the audit log), never as a 500.
func (h *signIn) oidcCallback(c echo.Context) error {
	markAudited(c)
	if h.config.OIDC == nil {
		return c.Redirect(http.StatusFound, pathTo(c, routenames.Login))
	}
	ctx := c.Request().Context()
	state := h.sm.PopString(ctx, sessState)
	nonce := h.sm.PopString(ctx, sessNonce)
	verifier := h.sm.PopString(ctx, sessVerifier)
	next := h.sm.PopString(ctx, sessNext)
	fail := func(reason string, status int, message, detail string) error { // no account known yet: counted, sampled
		h.refusals.refused(c, reason, "", h.loginEntry(c, "login", "", "", "failure", status, map[string]any{"error": detail}))
		return h.renderLogin(c, status, "", message)
	}
	if e := c.QueryParam("error"); e != "" {
		desc := c.QueryParam("error_description")
		msg := "The identity provider did not sign you in (" + e + ")."
		if desc != "" {
			msg = "The identity provider did not sign you in: " + desc + "."
		}
		return fail(refusedOIDCProvider, http.StatusUnauthorized, msg+" Try again, or ask your administrator.", "provider error "+e+": "+desc)
	}
	if state == "" || c.QueryParam("state") != state {
		return fail(refusedOIDCState, http.StatusBadRequest, "This sign-in link has expired or was not started here. Sign in again.", "state does not match")
	}
	cl, err := h.config.OIDC.Exchange(ctx, c.QueryParam("code"), verifier, nonce)
	if err != nil {
		msg := "The identity provider's answer could not be verified (" + describeTokenError(err) + "). Sign in again."
		reason := oidcTokenRefusal(err)
		if strings.HasPrefix(err.Error(), "token exchange") {
			msg = "The identity provider refused to complete the sign-in. Sign in again, or ask your administrator."
			reason = refusedOIDCExchange
		}
		return fail(reason, http.StatusUnauthorized, msg, err.Error())
	}
	u, err := h.users.UpsertOIDCUser(ctx, cl.Issuer, cl.Subject, cl.Email, cl.Name, cl.Groups, true)
	if err != nil {
		return err
	}
	return h.startSession(c, u, safeNext(next))
}

// oidcTokenRefusal is the refusal reason of an ID token that did not verify.
func oidcTokenRefusal(err error) string {
	switch {
	case errors.Is(err, auth.ErrNonce):
		return refusedOIDCNonce
	case errors.Is(err, auth.ErrExpired):
		return refusedOIDCExpired
	}
	return refusedOIDCToken
}

func describeTokenError(err error) string {
	switch {
	case errors.Is(err, auth.ErrNonce):
		return "the nonce does not match this sign-in"
	case errors.Is(err, auth.ErrExpired):
		return "the ID token has expired"
	}
	return "the ID token is not valid"
}

// auditLogin writes the audit row of a login or logout.
func (h *signIn) auditLogin(c echo.Context, action, subject, userID, result string, status int, changes map[string]any) {
	if h.audit == nil {
		return
	}
	e := h.loginEntry(c, action, subject, userID, result, status, changes)
	if err := h.audit.RecordAudit(context.WithoutCancel(c.Request().Context()), e); err != nil {
		h.log.Warn("audit row not written", "request_id", e.RequestID, "err", err)
	}
}

// loginEntry is the audit row of a login or logout.
func (h *signIn) loginEntry(c echo.Context, action, subject, userID, result string, status int, changes map[string]any) store.AuditEntry {
	if subject == "" {
		subject = "anonymous"
	}
	return store.AuditEntry{
		Subject: subject, SubjectType: "user", SourceIP: c.RealIP(), RequestID: requestID(c),
		HTTPMethod: c.Request().Method, Action: action, EntityType: "session", EntityID: userID, EntityName: subject,
		Result: result, HTTPStatus: status, Changes: changes,
	}
}
