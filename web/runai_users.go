package web

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/labstack/echo/v4"
)

// runAIUsers is Run:ai's users API (docs/security.md "Local users"): admins list every user
// (local accounts and the people of the identity provider who have signed in), create local
// accounts with a temporary password shown once, reset that password, sign a user out and
// delete a user. A new account holds nothing until an access rule names its email.
type runAIUsers struct {
	users     AuthStore
	passwords *passwordChecker // hashing shares the sign-in's password slots and their memory bound
	// localSignIn is false when people sign in with an identity provider: local accounts
	// could not sign in, so none are created.
	localSignIn bool
}

func (h *runAIUsers) routes(r router) {
	r.api.GET("/users", h.list)
	r.api.POST("/users", h.create)
	r.api.GET("/users/count", h.count)
	r.api.GET("/users/:userId", h.get)
	r.api.DELETE("/users/:userId", h.delete)
	r.api.POST("/users/:userId/password", h.resetPassword)
	r.api.POST("/users/:userId/logout", h.logout)
}

// runAIUser is Run:ai's User2. Every time is set for Arbiter's users but lastLogin (null
// until the first sign-in); groups are those the identity provider sent (none for local
// accounts).
type runAIUser struct {
	ID        string     `json:"id"`
	Username  string     `json:"username"`
	CreatedBy string     `json:"createdBy"`
	CreatedAt *time.Time `json:"createdAt"`
	UpdatedAt *time.Time `json:"updatedAt"`
	LastLogin *time.Time `json:"lastLogin"`
	IsLocal   *bool      `json:"isLocal"`
	Groups    []string   `json:"groups"`
}

func runAIUserOf(u store.User) runAIUser {
	local := u.Issuer == store.LocalIssuer
	groups := u.Groups
	if groups == nil {
		groups = []string{}
	}
	created, updated := u.CreatedAt, u.UpdatedAt
	return runAIUser{ID: u.ID.String(), Username: u.Username(), CreatedBy: u.CreatedBy, CreatedAt: &created,
		UpdatedAt: &updated, LastLogin: u.LastLoginAt, IsLocal: &local, Groups: groups}
}

// usersQuery parses the list parameters. Run:ai's limit defaults to its maximum, 500, and so
// does this list's (the other lists of Arbiter default to 50).
func usersQuery(c echo.Context) (listquery.Query, error) {
	q, err := listquery.Parse(c.QueryParams(), store.UserSpec)
	if err == nil && c.QueryParam("limit") == "" {
		q.Limit = listquery.MaxLimit
	}
	return q, err
}

func (h *runAIUsers) list(c echo.Context) error {
	if err := requireAdmin(c, "list users"); err != nil {
		return err
	}
	q, err := usersQuery(c)
	if err != nil {
		return err
	}
	users, err := h.users.Users(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapSlice(users, runAIUserOf))
}

func (h *runAIUsers) count(c echo.Context) error {
	if err := requireAdmin(c, "count users"); err != nil {
		return err
	}
	q, err := usersQuery(c)
	if err != nil {
		return err
	}
	n, err := h.users.CountUsers(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, countAnswer{Count: n})
}

func (h *runAIUsers) get(c echo.Context) error {
	if err := requireAdmin(c, "read users"); err != nil {
		return err
	}
	id, err := pathID(c, "userId")
	if err != nil {
		return err
	}
	u, err := h.users.User(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, runAIUserOf(u))
}

// userCreation is Run:ai's UserCreationRequest1. Arbiter sends no email, so notify changes
// nothing: the answer's tempPassword is the only copy. resetPassword is accepted and changes
// nothing either: Arbiter has no page yet where a person changes their own password.
type userCreation struct {
	Email         string `json:"email"`
	ResetPassword *bool  `json:"resetPassword"`
	Notify        *bool  `json:"notify"`
}

// maxEmail is the longest address SMTP carries (RFC 5321 section 4.5.3.1.3).
const maxEmail = 254

// emailPattern is Run:ai's own pattern of UserCreationRequest1.email.
var emailPattern = regexp.MustCompile(`^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$`)

// decodeUserCreation reads and checks the body of POST /users.
func decodeUserCreation(c echo.Context) (userCreation, error) {
	var req userCreation
	if err := decodeJSON(c, &req, "email", "resetPassword", "notify"); err != nil {
		return req, err
	}
	req.Email = strings.TrimSpace(req.Email)
	switch {
	case req.Email == "":
		return req, badField("email", "email is missing; send the address of the person to create, such as ada@example.com")
	case len(req.Email) > maxEmail:
		return req, badField("email", "email is %d characters long; an address has at most %d", len(req.Email), maxEmail)
	case !emailPattern.MatchString(req.Email):
		return req, badField("email", "email %q is not an email address such as ada@example.com", req.Email)
	}
	return req, nil
}

func (h *runAIUsers) create(c echo.Context) error {
	target(c, "create", "user", "")
	if err := requireAdmin(c, "create users"); err != nil {
		return err
	}
	if !h.localSignIn {
		return badRequest("local sign-in is off: this console signs people in with its identity provider; they appear here after their first sign-in")
	}
	req, err := decodeUserCreation(c)
	if err != nil {
		return err
	}
	password, hash, err := h.temporaryPassword(c.Request().Context())
	if err != nil {
		return err
	}
	u, err := h.users.CreateLocalUser(c.Request().Context(), req.Email, hash, actor(c))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, map[string]string{"id": u.ID.String(), "username": u.Username(), "tempPassword": password})
}

// temporaryPassword makes a random password (auth.GeneratePassword: crypto/rand, about 120
// bits) and its argon2id hash, in one of the sign-in's password slots.
func (h *runAIUsers) temporaryPassword(ctx context.Context) (password, hash string, err error) {
	password = auth.GeneratePassword()
	hash, err = h.passwords.hash(ctx, password)
	if errors.Is(err, errBusy) {
		return "", "", &httpError{status: http.StatusServiceUnavailable, retryAfter: int(passwordSlotWait / time.Second),
			message: "the server is busy checking sign-ins; no password was made; try again in a few seconds"}
	}
	return password, hash, err
}

// signOutTime is the instant a sign-out takes effect, rounded up to the microsecond the
// database keeps, so that everything begun before the request counts as before it.
func signOutTime() time.Time {
	return time.Now().Truncate(time.Microsecond).Add(time.Microsecond)
}

func (h *runAIUsers) resetPassword(c echo.Context) error {
	target(c, "reset-password", "user", c.Param("userId"))
	if err := requireAdmin(c, "reset passwords"); err != nil {
		return err
	}
	id, err := pathID(c, "userId")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	u, err := h.users.User(ctx, id)
	if err != nil {
		return err
	}
	if u.Issuer != store.LocalIssuer { // refused before the hash is made; the store checks again
		return badRequest("%s signs in with the identity provider %s, which keeps their password; reset it there", u.Username(), u.Issuer)
	}
	password, hash, err := h.temporaryPassword(ctx)
	if err != nil {
		return err
	}
	if err := h.users.ResetLocalPassword(ctx, id, hash, signOutTime(), actor(c)); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]string{"tempPassword": password})
}

func (h *runAIUsers) logout(c echo.Context) error {
	target(c, "logout", "user", c.Param("userId"))
	if err := requireAdmin(c, "sign users out"); err != nil {
		return err
	}
	id, err := pathID(c, "userId")
	if err != nil {
		return err
	}
	if err := h.users.SignOutUser(c.Request().Context(), id, signOutTime(), actor(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusOK)
}

func (h *runAIUsers) delete(c echo.Context) error {
	target(c, "delete", "user", c.Param("userId"))
	if err := requireAdmin(c, "delete users"); err != nil {
		return err
	}
	id, err := pathID(c, "userId")
	if err != nil {
		return err
	}
	if err := h.users.DeleteUser(c.Request().Context(), id, BootstrapAdmin, actor(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// hash makes password's argon2id hash in a free slot, waiting for one at most p.wait: a
// hash costs the memory of a check.
func (p *passwordChecker) hash(ctx context.Context, password string) (string, error) {
	timer := time.NewTimer(p.wait)
	defer timer.Stop()
	select {
	case p.slots <- struct{}{}:
	case <-timer.C:
		return "", errBusy
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-p.slots }()
	return auth.HashPassword(password)
}
