package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/labstack/echo/v4"
)

// Password checks are bounded: each argon2id check takes 64 MiB and two cores' worth of
// work for a moment, so at most passwordSlots run at once (128 MiB in all) and a further
// sign-in waits up to passwordSlotWait for a slot, then is told the server is busy (503 with
// Retry-After). Two is enough for people signing in; the throttle (ReserveLoginAttempt)
// already keeps each account and address to a few attempts.
const (
	passwordSlots    = 2
	passwordSlotWait = 2 * time.Second
)

// errBusy: every password slot stayed taken for passwordSlotWait.
var errBusy = errors.New("every password check slot is taken")

// passwordChecker runs password checks through a semaphore and counts them.
type passwordChecker struct {
	slots   chan struct{}
	wait    time.Duration
	checks  atomic.Int64 // password checks run
	running atomic.Int64
	peak    atomic.Int64 // most checks that ran at once
}

func newPasswordChecker() *passwordChecker {
	return &passwordChecker{slots: make(chan struct{}, passwordSlots), wait: passwordSlotWait}
}

// check compares password with hash in a free slot, waiting for one at most p.wait.
func (p *passwordChecker) check(ctx context.Context, hash, password string) (bool, error) {
	timer := time.NewTimer(p.wait)
	defer timer.Stop()
	select {
	case p.slots <- struct{}{}:
	case <-timer.C:
		return false, errBusy
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-p.slots }()
	n := p.running.Add(1)
	defer p.running.Add(-1)
	for peak := p.peak.Load(); n > peak && !p.peak.CompareAndSwap(peak, n); peak = p.peak.Load() {
	}
	p.checks.Add(1)
	return auth.CheckPassword(hash, password)
}

// PasswordChecks reports how many password checks this server has run and the most that
// ran at once.
func (s *Server) PasswordChecks() (checked, peak int64) {
	return s.signIn.passwords.checks.Load(), s.signIn.passwords.peak.Load()
}

// The login form is protected against cross-site posts without storing a session per
// visitor: a signed double-submit token. GET /login sets the cookie loginCookie to a token
// (issue time, random nonce, HMAC-SHA256 of both under the server's form key) and puts the
// same token in the form; POST /login must carry the cookie and the same token in the form
// body (or X-CSRF-Token), signed by this server's key and not older than loginTokenTTL. The
// key is shared by every replica (LoginConfig.FormKey, kept in the database).
const (
	loginCookie   = "arbiter_login"
	loginTokenTTL = 12 * time.Hour
	formKeyLabel  = "arbiter login form\x00"
	loginNonceLen = 16
)

type formSigner struct{ key []byte }

func newFormSigner(key []byte) formSigner {
	if len(key) == 0 { // tests and single-process use: a key for this process only
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	return formSigner{key: key}
}

func (f formSigner) mac(msg []byte) []byte {
	m := hmac.New(sha256.New, f.key)
	m.Write([]byte(formKeyLabel))
	m.Write(msg)
	return m.Sum(nil)
}

func (f formSigner) issue(now time.Time) string {
	msg := make([]byte, 8+loginNonceLen)
	binary.BigEndian.PutUint64(msg, uint64(now.Unix()))
	_, _ = rand.Read(msg[8:])
	return base64.RawURLEncoding.EncodeToString(append(msg, f.mac(msg)...))
}

// age returns how old a token this signer issued is; ok is false for anything else.
func (f formSigner) age(token string, now time.Time) (age time.Duration, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) != 8+loginNonceLen+sha256.Size {
		return 0, false
	}
	msg, sum := b[:8+loginNonceLen], b[8+loginNonceLen:]
	if !hmac.Equal(sum, f.mac(msg)) {
		return 0, false
	}
	age = now.Sub(time.Unix(int64(binary.BigEndian.Uint64(msg)), 0))
	return age, age > -time.Minute && age < loginTokenTTL
}

// loginFormToken returns the token for the login form, setting its cookie unless the browser
// already holds one young enough to outlive the form.
func (h *signIn) loginFormToken(c echo.Context) string {
	now := time.Now()
	if ck, err := c.Request().Cookie(loginCookie); err == nil {
		if age, ok := h.forms.age(ck.Value, now); ok && age < loginTokenTTL/2 {
			return ck.Value
		}
	}
	t := h.forms.issue(now)
	c.SetCookie(&http.Cookie{Name: loginCookie, Value: t, Path: pathTo(c, routenames.Login), HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: h.isHTTPS(c.Request())})
	return t
}

// loginFormValid checks the double-submit token of a POST /login.
func (h *signIn) loginFormValid(c echo.Context) bool {
	ck, err := c.Request().Cookie(loginCookie)
	if err != nil {
		return false
	}
	got := csrfFromRequest(c)
	if subtle.ConstantTimeCompare([]byte(got), []byte(ck.Value)) != 1 {
		return false
	}
	_, ok := h.forms.age(got, time.Now())
	return ok
}

// forgetLoginForm deletes the login form's cookie once it has served.
func (h *signIn) forgetLoginForm(c echo.Context) {
	c.SetCookie(&http.Cookie{Name: loginCookie, Path: pathTo(c, routenames.Login), MaxAge: -1, Expires: time.Unix(1, 0), HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: h.isHTTPS(c.Request())})
}

// csrfFromRequest reads a CSRF token from the X-CSRF-Token header or the form body, never
// from the query string (which ends up in logs, history and Referer headers).
func csrfFromRequest(c echo.Context) string {
	if t := c.Request().Header.Get("X-CSRF-Token"); t != "" {
		return t
	}
	return c.Request().PostFormValue("_csrf")
}
