package web

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// Run:ai's token endpoints (docs/api.md "Access tokens"): a script trades an API key's client
// credentials, or a local account's user name and password, for a short-lived access token that
// it then sends as "Authorization: Bearer". /api/v1/token takes JSON and answers {accessToken};
// /api/v2/token takes an OAuth 2.0 form (RFC 6749 section 4.4 and 4.3) and answers
// {access_token, token_type, expires_in}.
const (
	tokenPathV1     = "/api/v1/token"
	tokenPathV2     = "/api/v2/token"
	tokenPathRevoke = "/api/v1/token/revoke"
)

// isTokenEndpoint: the token endpoints use no session, so the CSRF check does not apply to
// them (a cross-site post there can only get the poster a token for credentials it already has).
func isTokenEndpoint(path string) bool {
	return path == tokenPathV1 || path == tokenPathV2 || path == tokenPathRevoke
}

// The longest value each credential field takes: a key id is a UUID, a secret 43 characters
// (or a whole "arb_" token), a password anything a person types.
const (
	maxClientField = 256
	maxPassword    = 1024
)

const (
	grantClientCredentials = "client_credentials"
	grantPassword          = "password"
	grantRefreshToken      = "refresh_token"
)

// tokenRequest is a token request of either version: what is asked, and how its version
// spells each field (for the sentences).
type tokenRequest struct {
	grantType, clientID, clientSecret, username, password, refreshToken string
	names                                                               tokenFields
}

type tokenFields struct{ grantType, clientID, clientSecret, username, password, refreshToken string }

var (
	fieldsV1 = tokenFields{"grantType", "clientId", "clientSecret", "username", "password", "refreshToken"}
	fieldsV2 = tokenFields{"grant_type", "client_id", "client_secret", "username", "password", "refresh_token"}
)

// tokenError is a refused token request: its status, the OAuth error code (/api/v2/token)
// and the sentence.
type tokenError struct {
	status  int
	code    string
	message string
}

func (e *tokenError) Error() string { return e.message }

func tokenRefusal(status int, code, format string, args ...any) *tokenError {
	return &tokenError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

type tokenRequestV1 struct {
	GrantType string `json:"grantType"`
	ClientID  string `json:"clientId"`
	// ClientIDAsRunAI is the client id as Run:ai's document spells it (its own example sends
	// clientID); either spelling is accepted, both only when they agree.
	ClientIDAsRunAI string `json:"clientID"`
	ClientSecret    string `json:"clientSecret"`
	Username        string `json:"username"`
	Password        string `json:"password"`
	RefreshToken    string `json:"refreshToken"`
}

// decodeTokenV1 reads the JSON body of /api/v1/token and checks it.
func decodeTokenV1(c echo.Context) (tokenRequest, error) {
	var b tokenRequestV1
	if err := decodeJSON(c, &b, "grantType", "clientId", "clientID", "clientSecret", "username", "password", "refreshToken"); err != nil {
		return tokenRequest{}, err
	}
	names := fieldsV1
	if b.ClientIDAsRunAI != "" {
		if b.ClientID != "" && b.ClientID != b.ClientIDAsRunAI {
			return tokenRequest{}, &httpError{status: http.StatusBadRequest, field: "clientID",
				message: "clientId and clientID are two spellings of the client id and name different clients; send one of them"}
		}
		b.ClientID, names.clientID = b.ClientIDAsRunAI, "clientID"
	}
	r := tokenRequest{grantType: b.GrantType, clientID: b.ClientID, clientSecret: b.ClientSecret,
		username: b.Username, password: b.Password, refreshToken: b.RefreshToken, names: names}
	return r, r.check()
}

// decodeTokenV2 reads the form of /api/v2/token and checks it. Parameters it does not know
// (scope, audience) are ignored, as RFC 6749 section 3.2 asks; each known one may be sent once.
func decodeTokenV2(c echo.Context) (tokenRequest, error) {
	mt, _, err := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return tokenRequest{}, tokenRefusal(http.StatusUnsupportedMediaType, "invalid_request",
			"send the token request as a form with the header Content-Type: application/x-www-form-urlencoded")
	}
	// RFC 6749 section 2.3.1: credentials go in the body, never the URI (which servers,
	// proxies and browsers' histories log).
	query := c.Request().URL.Query()
	for _, name := range []string{fieldsV2.grantType, fieldsV2.clientID, fieldsV2.clientSecret, fieldsV2.username, fieldsV2.password, fieldsV2.refreshToken} {
		if query.Has(name) {
			return tokenRequest{}, tokenRefusal(http.StatusBadRequest, "invalid_request",
				"%s is in the query string; send the token request's fields in the form body only (RFC 6749 section 2.3.1), and treat a secret sent in a URL as leaked", name)
		}
	}
	form, err := c.FormParams()
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
			return tokenRequest{}, err
		}
		return tokenRequest{}, tokenRefusal(http.StatusBadRequest, "invalid_request", "the form could not be read; write a '%%' inside a value as %%25")
	}
	r := tokenRequest{names: fieldsV2}
	for name, dst := range map[string]*string{fieldsV2.grantType: &r.grantType, fieldsV2.clientID: &r.clientID,
		fieldsV2.clientSecret: &r.clientSecret, fieldsV2.username: &r.username, fieldsV2.password: &r.password,
		fieldsV2.refreshToken: &r.refreshToken} {
		switch vals := form[name]; len(vals) {
		case 0:
		case 1:
			*dst = vals[0]
		default:
			return tokenRequest{}, tokenRefusal(http.StatusBadRequest, "invalid_request", "%s is sent %d times; send it once", name, len(vals))
		}
	}
	return r, r.check()
}

// check refuses a request that does not say what it asks for, naming the field.
func (r tokenRequest) check() error {
	n := r.names
	bad := func(format string, args ...any) error {
		return tokenRefusal(http.StatusBadRequest, "invalid_request", format, args...)
	}
	for _, f := range []struct {
		name, value string
		max         int
	}{{n.grantType, r.grantType, 64}, {n.clientID, r.clientID, maxClientField}, {n.clientSecret, r.clientSecret, maxClientField},
		{n.username, r.username, maxClientField}, {n.password, r.password, maxPassword}, {n.refreshToken, r.refreshToken, maxClientField}} {
		if len(f.value) > f.max {
			return bad("%s is %d bytes long; at most %d are accepted", f.name, len(f.value), f.max)
		}
		if !utf8.ValidString(f.value) || strings.ContainsRune(f.value, 0) {
			return bad("%s must be UTF-8 text without NUL characters", f.name)
		}
	}
	if r.refreshToken != "" && r.grantType != grantRefreshToken {
		return bad("%s goes with the %s grant only", n.refreshToken, grantRefreshToken)
	}
	switch r.grantType {
	case grantRefreshToken:
		return r.checkRefresh()
	case grantClientCredentials:
		if r.clientID == "" || r.clientSecret == "" {
			return bad("the %s grant needs %s and %s: an API key's id and secret", grantClientCredentials, n.clientID, n.clientSecret)
		}
		if _, err := uuid.Parse(r.clientID); err != nil {
			return bad("%s must be an API key's id (a UUID), not %q", n.clientID, r.clientID)
		}
		if r.username != "" || r.password != "" {
			return bad("the %s grant takes no %s or %s; send those with the %s grant", grantClientCredentials, n.username, n.password, grantPassword)
		}
	case grantPassword:
		if strings.TrimSpace(r.username) == "" || r.password == "" {
			return bad("the %s grant needs %s and %s: a local account's", grantPassword, n.username, n.password)
		}
	case "":
		return bad("%s is missing; send %q, %q or %q", n.grantType, grantClientCredentials, grantPassword, grantRefreshToken)
	default:
		return &tokenError{status: http.StatusBadRequest, code: "unsupported_grant_type",
			message: fmt.Sprintf("%s %q is not one Arbiter grants; send %q, %q or %q", n.grantType, r.grantType, grantClientCredentials, grantPassword, grantRefreshToken)}
	}
	return nil
}

// issuedToken is a granted access token.
type issuedToken struct {
	token   string
	expires time.Time
	// refresh is whom a refresh token issued beside it would stand for (tokens_refresh.go).
	refresh store.RefreshToken
	// refreshText is the refresh token a refresh_token grant presented: answered again as it is.
	refreshText string
}

// tokenV1 answers POST /api/v1/token with {accessToken}; refusals use Arbiter's error envelope.
func (h *signIn) tokenV1(c echo.Context) error {
	markAudited(c)
	t, err := h.decodeAndGrant(c, decodeTokenV1)
	if err != nil {
		var te *tokenError
		if errors.As(err, &te) {
			return &httpError{status: te.status, message: te.message}
		}
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	answer := map[string]any{"accessToken": t.token, "expiresIn": int(math.Round(time.Until(t.expires).Seconds()))}
	refresh, err := h.refreshTokenFor(c, t)
	if err != nil {
		return err
	}
	answer["refreshToken"] = refresh
	return c.JSON(http.StatusOK, answer)
}

// decodeAndGrant reads a token request and grants it; a request refused before its
// credentials were checked is counted here, its audit row sampled (grant writes the others).
func (h *signIn) decodeAndGrant(c echo.Context, decode func(echo.Context) (tokenRequest, error)) (issuedToken, error) {
	r, err := decode(c)
	if err != nil {
		status, message := statusOf(err)
		var te *tokenError
		if errors.As(err, &te) {
			status, message = te.status, te.message
		}
		h.refusals.refused(c, refusedBadGrant, "", h.tokenEntry(c, "anonymous", "user", "", "failure", status, message))
		return issuedToken{}, err
	}
	return h.grant(c, r)
}

// tokenV2 answers POST /api/v2/token with {access_token, token_type, expires_in}; refusals
// are OAuth 2.0 error answers ({error, error_description}) that also carry Arbiter's
// envelope (code, message).
func (h *signIn) tokenV2(c echo.Context) error {
	markAudited(c)
	t, err := h.decodeAndGrant(c, decodeTokenV2)
	if err == nil {
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, map[string]any{"access_token": t.token, "token_type": "Bearer",
			"expires_in": int(math.Round(time.Until(t.expires).Seconds()))})
	}
	var te *tokenError
	if !errors.As(err, &te) {
		return err
	}
	if te.code == "invalid_client" {
		c.Response().Header().Set("WWW-Authenticate", `Basic realm="arbiter"`) // RFC 6749 section 5.2
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(te.status, map[string]any{"error": te.code, "error_description": te.message, "code": te.status, "message": te.message})
}

// grant checks the credentials of a well-formed request and issues the token, auditing the
// outcome as a sign-in is.
func (h *signIn) grant(c echo.Context, r tokenRequest) (issuedToken, error) {
	if h.users == nil {
		return issuedToken{}, tokenRefusal(http.StatusUnauthorized, "invalid_client", "this server has no credential store")
	}
	ctx := c.Request().Context()
	now := time.Now()
	expires := now.Add(auth.AccessTokenLifetime)
	switch r.grantType {
	case grantClientCredentials:
		id := uuid.MustParse(r.clientID) // check() parsed it
		secret := r.clientSecret
		if keyID, s, ok := auth.ParseAPIKey(secret); ok { // the whole key, as the console shows it
			if keyID != id {
				h.refusals.refused(c, refusedBadGrant, "", h.tokenEntry(c, id.String(), "api-key", id.String(), "failure", http.StatusBadRequest, "client secret of another key"))
				return issuedToken{}, tokenRefusal(http.StatusBadRequest, "invalid_request",
					"%s is an API key whose id is not %s; send the key's id as %s", r.names.clientSecret, r.names.clientID, r.names.clientID)
			}
			secret = s
		}
		k, err := h.checkAPIKey(ctx, id, secret)
		if err == nil && k.OwnerUserID != nil {
			// A person's key goes with its person; the cache may still hold it for a few
			// seconds after the person was deleted elsewhere.
			if _, uerr := h.users.User(ctx, *k.OwnerUserID); errors.Is(uerr, store.ErrNotFound) {
				h.keys.forget(id)
				err = store.ErrBadKey
			} else if uerr != nil {
				err = uerr
			}
		}
		switch {
		case errors.Is(err, store.ErrUnknownKey): // any caller can make up ids: counted, sampled
			h.refusals.refused(c, refusedUnknownClient, "", h.tokenEntry(c, "anonymous", "api-key", id.String(), "denied", http.StatusUnauthorized, "no API key has this client id"))
		case errors.Is(err, store.ErrBadKey): // a real key: on record each time
			h.auditToken(c, id.String(), "api-key", id.String(), "denied", http.StatusUnauthorized, "wrong secret, or the key was revoked or has expired")
		}
		if errors.Is(err, store.ErrBadKey) {
			return issuedToken{}, tokenRefusal(http.StatusUnauthorized, "invalid_client",
				"the client credentials are not those of a valid API key: it is unknown, the secret is wrong, or it was revoked, disabled or has expired")
		}
		if err != nil {
			return issuedToken{}, err
		}
		if k.ExpiresAt.Before(expires) {
			expires = k.ExpiresAt // a token never outlives its key
		}
		stamp := secretStamp(k.SecretHash)
		return h.issueAudited(c, k.ID.String(), keySubjectType(k), k.ID.String(), func() issuedToken {
			return issuedToken{token: h.tokens.IssueStamped(auth.TokenForAPIKey, k.ID, expires, stamp), expires: expires,
				refresh: store.RefreshToken{SubjectKind: store.RefreshForAPIKey, SubjectID: k.ID, KeyStamp: stamp[:]}}
		})
	case grantRefreshToken:
		return h.grantRefresh(c, r)
	default: // grantPassword; check() allows nothing else
		if h.config.OIDC != nil {
			return issuedToken{}, &tokenError{status: http.StatusBadRequest, code: "unsupported_grant_type",
				message: "the password grant is off: this server signs people in with its identity provider; use an API key's client credentials"}
		}
		name := strings.TrimSpace(r.username)
		res, err := h.checkLocalPassword(c, name, r.password)
		if err != nil {
			return issuedToken{}, err
		}
		switch {
		case res.wait > 0:
			secs := int(math.Ceil(res.wait.Seconds()))
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			h.refusals.refused(c, refusedThrottled, "", h.tokenEntry(c, name, "user", "", "denied", http.StatusTooManyRequests, "too many failed sign-ins"))
			return issuedToken{}, tokenRefusal(http.StatusTooManyRequests, "slow_down",
				"too many failed sign-ins for this account or address; wait %d seconds and try again", secs)
		case res.busy:
			secs := int(passwordSlotWait / time.Second)
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			h.refusals.refused(c, refusedBusy, "", h.tokenEntry(c, name, "user", "", "failure", http.StatusServiceUnavailable, "server busy checking other sign-ins"))
			return issuedToken{}, tokenRefusal(http.StatusServiceUnavailable, "temporarily_unavailable",
				"the server is busy checking other sign-ins; wait %d seconds and try again", secs)
		case !res.ok && !res.known:
			h.refusals.refused(c, refusedUnknownAccount, "", h.tokenEntry(c, name, "user", "", "denied", http.StatusUnauthorized, "no such account"))
			return issuedToken{}, tokenRefusal(http.StatusUnauthorized, "invalid_grant", "the user name or password is not right")
		case !res.ok:
			h.auditToken(c, name, "user", res.user.ID.String(), "denied", http.StatusUnauthorized, "wrong user name or password")
			return issuedToken{}, tokenRefusal(http.StatusUnauthorized, "invalid_grant", "the user name or password is not right")
		}
		return h.issueAudited(c, name, "user", res.user.ID.String(), func() issuedToken {
			return issuedToken{token: h.tokens.Issue(auth.TokenForUser, res.user.ID, expires), expires: expires,
				refresh: store.RefreshToken{SubjectKind: store.RefreshForUser, SubjectID: res.user.ID}}
		})
	}
}

// checkAPIKey returns the key if secret is its secret and it is neither revoked nor expired,
// from the cache of keys checked in the last few seconds or else from the store (ErrBadKey).
func (h *signIn) checkAPIKey(ctx context.Context, id uuid.UUID, secret string) (store.APIKey, error) {
	hash := auth.HashAPIKeySecret(secret)
	now := time.Now()
	if k, ok := h.keys.get(id, hash, now); ok {
		return k, nil
	}
	k, err := h.users.CheckAPIKey(ctx, id, hash)
	if err != nil {
		return store.APIKey{}, err
	}
	h.keys.put(k, hash, now)
	return k, nil
}

// accessTokenIdentity is who an access token stands for: its API key, which must still be
// valid (a revoked key's tokens stop working within the key cache's few seconds), or its
// local account, with the access rules it has now.
func (h *signIn) accessTokenIdentity(ctx context.Context, token string) (auth.Identity, error) {
	now := time.Now()
	t, err := h.tokens.Verify(token, now)
	kind, id, stamp := t.Kind, t.ID, t.Stamp
	if err != nil {
		return auth.Anonymous, unauthorized("the access token was not issued by this server or has expired (they last %v); get a new one from %s", auth.AccessTokenLifetime, tokenPathV2)
	}
	if kind == auth.TokenForAPIKey {
		k, ok := h.keys.active(id, now)
		if !ok {
			k, err = h.users.ActiveAPIKey(ctx, id)
			if errors.Is(err, store.ErrBadKey) {
				return auth.Anonymous, unauthorized("the API key this access token was issued for has been revoked or has expired; ask an admin for a new one")
			}
			if err != nil {
				return auth.Anonymous, err
			}
			h.keys.put(k, k.SecretHash, now)
		}
		if secretStamp(k.SecretHash) != stamp {
			return auth.Anonymous, unauthorized("the secret this access token was issued for has been regenerated; get a new token with the new secret from %s", tokenPathV2)
		}
		return h.keyIdentity(ctx, k)
	}
	u, err := h.users.User(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return auth.Anonymous, unauthorized("the account this access token was issued for no longer exists")
	}
	if err != nil {
		return auth.Anonymous, err
	}
	if u.SignedInBefore(t.Issued) {
		return auth.Anonymous, unauthorized("this access token was issued before an admin signed its account out or reset its password; get a new one from %s", tokenPathV2)
	}
	return h.userIdentity(ctx, u)
}

// secretStamp is the fingerprint of a key's secret that its access tokens carry: a token
// whose stamp is not the key's current one was issued for a secret since regenerated. It is a
// hash of the secret's hash, so a token reveals nothing of the secret.
func secretStamp(secretHash []byte) [8]byte {
	sum := sha256.Sum256(append([]byte("arbiter access token stamp\x00"), secretHash...))
	return [8]byte(sum[:8])
}

// keySubjectType is how the audit log names a key's kind: a service account's API key, or a
// person's access key.
func keySubjectType(k store.APIKey) string {
	if k.OwnerUserID != nil {
		return "access-key"
	}
	return "api-key"
}

// auditToken writes the audit row of a token request, as auditLogin does for a sign-in.
func (h *signIn) auditToken(c echo.Context, subject, subjectType, entityID, result string, status int, problem string) error {
	if h.audit == nil {
		return nil
	}
	e := h.tokenEntry(c, subject, subjectType, entityID, result, status, problem)
	err := h.audit.RecordAudit(context.WithoutCancel(c.Request().Context()), e)
	if err != nil {
		h.log.Warn("audit row not written", "request_id", e.RequestID, "err", err)
	}
	return err
}

// tokenEntry is the audit row of a token request.
func (h *signIn) tokenEntry(c echo.Context, subject, subjectType, entityID, result string, status int, problem string) store.AuditEntry {
	changes := map[string]any{"lifetimeSeconds": int(auth.AccessTokenLifetime.Seconds())}
	if problem != "" {
		changes = map[string]any{"error": problem}
	}
	return store.AuditEntry{
		Subject: subject, SubjectType: subjectType, SourceIP: c.RealIP(), RequestID: requestID(c),
		HTTPMethod: c.Request().Method, Action: "issue", EntityType: "access-token", EntityID: entityID, EntityName: subject,
		Result: result, HTTPStatus: status, Changes: changes,
	}
}

// issueAudited issues a token only once its audit row is written: a token nobody can trace
// is not handed out (503: try again once the database answers).
func (h *signIn) issueAudited(c echo.Context, subject, subjectType, entityID string, issue func() issuedToken) (issuedToken, error) {
	if err := h.auditToken(c, subject, subjectType, entityID, "success", http.StatusOK, ""); err != nil {
		c.Response().Header().Set("Retry-After", "5")
		return issuedToken{}, tokenRefusal(http.StatusServiceUnavailable, "temporarily_unavailable",
			"no token was issued: its audit row could not be recorded (the database does not answer); try again in a few seconds")
	}
	return issue(), nil
}
