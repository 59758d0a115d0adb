package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// apiError is the envelope of every non-2xx answer (docs/api.md "Errors").
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// httpError is an error that already knows its status and its sentence for people, and the
// field it concerns when it refuses one value (named as the API names it; see store.Error).
type httpError struct {
	status  int
	message string
	field   string
	// retryAfter, in seconds, is sent as Retry-After when set (a 429 or 503 that will pass).
	retryAfter int
}

func (e *httpError) Error() string { return e.message }

func badRequest(format string, args ...any) error {
	return &httpError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...)}
}

// badField refuses the value of one field.
func badField(field, format string, args ...any) error {
	return &httpError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...), field: field}
}

// fieldOf is the field a refusal concerns, as its maker said: "" when it names none.
func fieldOf(err error) string {
	var he *httpError
	if errors.As(err, &he) {
		return he.field
	}
	return store.FieldOf(err)
}

func unauthorized(format string, args ...any) error {
	return &httpError{status: http.StatusUnauthorized, message: fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) error {
	return &httpError{status: http.StatusForbidden, message: fmt.Sprintf(format, args...)}
}

// statusOf maps every error to its HTTP status and public message. This is the one place
// where store kinds become statuses; anything unrecognised is a 500 whose detail stays in
// the log, never in the answer.
func statusOf(err error) (int, string) {
	var he *httpError
	var ee *echo.HTTPError
	var se *store.Error
	switch {
	case errors.As(err, &he):
		return he.status, he.message
	case listquery.IsError(err):
		return http.StatusBadRequest, err.Error()
	case errors.As(err, &se):
		switch {
		case errors.Is(se.Kind, store.ErrNotFound):
			return http.StatusNotFound, se.Message
		case errors.Is(se.Kind, store.ErrConflict):
			return http.StatusConflict, se.Message
		case errors.Is(se.Kind, store.ErrInvalid):
			return http.StatusBadRequest, se.Message
		case errors.Is(se.Kind, store.ErrUnavailable):
			return http.StatusServiceUnavailable, se.Message
		case errors.Is(se.Kind, store.ErrUnauthenticated):
			return http.StatusUnauthorized, se.Message
		case errors.Is(se.Kind, store.ErrForbidden):
			return http.StatusForbidden, se.Message
		case errors.Is(se.Kind, store.ErrBusy):
			return http.StatusTooManyRequests, se.Message
		}
	case errors.As(err, &ee):
		switch ee.Code {
		case http.StatusNotFound:
			return ee.Code, "there is no such page or resource; check the path"
		case http.StatusMethodNotAllowed:
			return ee.Code, "this path does not accept that method; see /api/v1/openapi.json for what it accepts"
		case http.StatusRequestEntityTooLarge:
			return ee.Code, "the request body is over 1 MiB; send a smaller body"
		}
		if msg, ok := ee.Message.(string); ok && ee.Code < 500 {
			return ee.Code, msg
		}
		return ee.Code, http.StatusText(ee.Code)
	}
	return http.StatusInternalServerError, "something went wrong on our side; the request id in X-Request-Id helps an operator find it"
}

// handleError answers with the JSON envelope on API paths and with an error page elsewhere.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, message := statusOf(err)
	if he := (*httpError)(nil); errors.As(err, &he) && he.retryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(he.retryAfter))
	} else if se := (*store.Error)(nil); errors.As(err, &se) && se.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(se.RetryAfter))
	}
	if status >= 500 && status != http.StatusServiceUnavailable {
		s.log.Error("request failed", "request_id", requestID(c), "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	} else if status == http.StatusServiceUnavailable {
		s.log.Warn("dependency unavailable", "request_id", requestID(c), "err", err)
	}
	if isAPI(c) {
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(status)
			return
		}
		_ = c.JSON(status, apiError{Code: status, Message: message})
		return
	}
	page := views.ErrorPage{Page: s.page(c, "Error", ""), Status: status, Message: message}
	if status == http.StatusServiceUnavailable {
		page.Banner = "The database is unavailable. Arbiter keeps scheduling from its last good configuration; changes cannot be saved until it is back."
	}
	_ = render(c, status, views.ErrorView(page))
}

// isAPI says the answer is JSON: the API's, and the console's JSON that its charts load
// (/console/...).
func isAPI(c echo.Context) bool {
	return strings.HasPrefix(c.Request().URL.Path, "/api/") || strings.HasPrefix(c.Request().URL.Path, "/console/")
}
