package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/apiversion"
)

// maxAnswer bounds what the command line reads of one answer (the API's lists are paged).
const maxAnswer = 16 << 20

// client calls the REST API of one server as the signed-in caller, renewing the access token
// with the refresh token when it has expired.
type client struct {
	app  *app
	base string // the server's URL, without a trailing slash
	http *http.Client
	// versionSaid is whether the API revision warning was printed in this run.
	versionSaid bool
}

// apiError is the API's error envelope.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// call sends one request with the access token and decodes the JSON answer into out (nil:
// ignored). Every call has the run's deadline.
func (c *client) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	if err := c.ensureToken(ctx); err != nil {
		return err
	}
	status, raw, err := c.send(ctx, method, path, query, body, c.app.cfg.AccessToken)
	if err != nil {
		return err
	}
	if status == http.StatusUnauthorized && c.app.cfg.RefreshToken != "" {
		// The access token was refused (a server restarted with a new key, a sign-out):
		// renew it once and try again.
		if rerr := c.refresh(ctx); rerr != nil {
			return rerr
		}
		if status, raw, err = c.send(ctx, method, path, query, body, c.app.cfg.AccessToken); err != nil {
			return err
		}
	}
	return decodeAnswer(status, raw, out, c.base)
}

// decodeAnswer turns an answer into out, or into the Error of its status with the API's sentence.
func decodeAnswer(status int, raw []byte, out any, base string) error {
	if status >= 200 && status < 300 {
		if out == nil || len(bytes.TrimSpace(raw)) == 0 {
			return nil
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return unavailable("the server at %s answered something that is not the API's JSON (%v); is the URL an Arbiter server?", base, err)
		}
		return nil
	}
	var e apiError
	msg := ""
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		msg = e.Message
	} else {
		msg = fmt.Sprintf("the server answered %d %s", status, http.StatusText(status))
	}
	if status == http.StatusUnauthorized {
		msg += "; sign in again with: arbiter login " + base
	}
	return &Error{Code: codeOfStatus(status), Message: msg}
}

// send is one HTTP exchange with the run's deadline: the status and the body (at most maxAnswer).
func (c *client) send(ctx context.Context, method, path string, query url.Values, body any, token string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.app.timeout)
	defer cancel()
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, usageError("%s is not a URL the command line can call: %v", c.base, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "arbiter-cli/"+strconv.Itoa(apiversion.Current))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, nil, unavailable("the server at %s did not answer within %v (--timeout)", c.base, c.app.timeout)
		}
		if errors.Is(err, context.Canceled) {
			return 0, nil, unavailable("interrupted")
		}
		return 0, nil, unavailable("the server at %s cannot be reached: %v", c.base, err)
	}
	defer res.Body.Close()
	c.checkVersion(res.Header.Get(apiversion.Header))
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return 0, nil, unavailable("the answer of %s broke off: %v", c.base, err)
	}
	return res.StatusCode, raw, nil
}

// checkVersion says once a run, on stderr, when the server's API revision is not this
// command line's, and which of the two to update.
func (c *client) checkVersion(header string) {
	if c.versionSaid {
		return
	}
	c.versionSaid = true
	if header == "" {
		fmt.Fprintf(c.app.stderr, "warning: the server at %s names no API version: it is older than this command line (API %d) and may lack what it uses; update the server, or use the arbiter binary of the server's release\n",
			c.base, apiversion.Current)
		return
	}
	v, err := strconv.Atoi(header)
	switch {
	case err != nil:
		fmt.Fprintf(c.app.stderr, "warning: the server at %s names API version %q, which this command line does not understand\n", c.base, header)
	case v > apiversion.Current:
		fmt.Fprintf(c.app.stderr, "warning: the server at %s speaks API version %d, newer than this command line's %d; update the arbiter binary\n", c.base, v, apiversion.Current)
	case v < apiversion.Current:
		fmt.Fprintf(c.app.stderr, "warning: the server at %s speaks API version %d, older than this command line's %d; some commands may be refused until the server is updated\n", c.base, v, apiversion.Current)
	}
}

// tokenAnswer is what /api/v1/token answers.
type tokenAnswer struct {
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
	ExpiresIn    int    `json:"expiresIn"`
}

// ensureToken renews an access token that has expired (or is about to), or fails with
// ExitSignedOut when there is no sign-in.
func (c *client) ensureToken(ctx context.Context) error {
	cfg := c.app.cfg
	if cfg.AccessToken == "" && cfg.RefreshToken == "" {
		return signedOut("not signed in to %s; sign in with: arbiter login %s --client-id ID (or --username NAME)", c.base, c.base)
	}
	if cfg.AccessToken != "" && c.app.now().Add(30*time.Second).Before(cfg.AccessExpires) {
		return nil
	}
	if cfg.RefreshToken == "" {
		return signedOut("the sign-in to %s has expired; sign in again with: arbiter login %s", c.base, c.base)
	}
	return c.refresh(ctx)
}

// refresh trades the refresh token for a new access token and keeps it.
func (c *client) refresh(ctx context.Context) error {
	var t tokenAnswer
	status, raw, err := c.send(ctx, http.MethodPost, "/api/v1/token", nil,
		map[string]string{"grantType": "refresh_token", "refreshToken": c.app.cfg.RefreshToken, "clientID": "arbiter-cli"}, "")
	if err != nil {
		return err
	}
	if err := decodeAnswer(status, raw, &t, c.base); err != nil {
		if CodeOf(err) == ExitRefused { // the server refuses the refresh token: signed out
			return signedOut("%s", strings.TrimSuffix(err.Error(), "."))
		}
		return err
	}
	return c.app.keepTokens(t)
}
