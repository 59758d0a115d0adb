package web

import (
	"errors"
	"math"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/labstack/echo/v4"
)

// Input limits (docs/api.md "Input limits"). Text stored in an indexed column is bounded
// below PostgreSQL's index entry size; every other text value by maxText.
const (
	maxAPIKeyName  = 200 // characters of an API key's name
	maxRuleSubject = 500 // characters of an access rule's subject (an email, an OIDC subject or a group)
	maxUsername    = 200 // characters of a user name at sign-in (the throttle's key, the audit row's subject)
	maxRequestID   = 200 // bytes of a caller's X-Request-Id, which audit rows carry
)

// maxIntColumn is the largest value of PostgreSQL's integer, the type of every number column.
const maxIntColumn = math.MaxInt32

// fieldLimits bound, by name, form fields and query parameters stored in indexed columns
// before any handler sees them.
var fieldLimits = map[string]int{"username": maxUsername}

// checkInput refuses, with a 400 naming the parameter, what Go's parsers would silently drop or
// PostgreSQL refuse: a query string url.ParseQuery cannot parse (a ';' separator, a bad %
// escape: Go's parser drops those pairs and the request would run with defaults), a path, query
// parameter or form field holding NUL or bytes that are not UTF-8, text over its limit, and an
// X-Request-Id (which audit rows carry) that is not short printable text. JSON bodies are
// checked where they are decoded (decodeJSON).
func checkInput(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if id := r.Header.Get(echo.HeaderXRequestID); id != "" && !printable(id, maxRequestID) {
			c.Response().Header().Set(echo.HeaderXRequestID, auth.RandomToken(16))
			return badRequest("the X-Request-Id header must be printable UTF-8 text of at most %d bytes", maxRequestID)
		}
		if err := checkText("the path", r.URL.Path, []byte(r.URL.Path)); err != nil {
			return err
		}
		query, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return badQuery("the query string", err)
		}
		if err := checkValues("query parameter", query); err != nil {
			return err
		}
		if isForm(r.Header.Get(echo.HeaderContentType)) && isMutating(r.Method) {
			form, err := c.FormParams()
			if err != nil {
				if he := (*echo.HTTPError)(nil); errors.As(err, &he) {
					return err // over the body limit
				}
				return badQuery("the form", err)
			}
			if err := checkValues("form field", form); err != nil {
				return err
			}
		}
		return next(c)
	}
}

func badQuery(what string, err error) error {
	if strings.Contains(err.Error(), "semicolon") {
		return badRequest("%s holds ';', which does not separate parameters; separate them with '&' and write a ';' inside a value as %%3B", what)
	}
	return badRequest("%s is not valid (%v); write a '%%' inside a value as %%25", what, err)
}

func isForm(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/x-www-form-urlencoded" || mt == "multipart/form-data")
}

// checkValues checks every name and value of a query string or form.
func checkValues(kind string, v url.Values) error {
	for name, vals := range v {
		if err := checkText("a "+kind+" name", name, []byte(name)); err != nil {
			return err
		}
		what := kind + " " + strconv.Quote(name)
		for _, val := range vals {
			if err := checkText(what, val, []byte(val)); err != nil {
				return err
			}
			if limit, ok := fieldLimits[name]; ok {
				if err := checkLength(what, val, limit); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkLength refuses text longer than limit characters.
func checkLength(what, s string, limit int) error {
	if n := utf8.RuneCountInString(s); n > limit {
		return badRequest("%s is %d characters long; the limit is %d", what, n, limit)
	}
	return nil
}

// printable reports whether s is UTF-8 of at most limit bytes with no control characters.
func printable(s string, limit int) bool {
	if len(s) > limit || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// formInt parses a whole number typed into a form field (blank is nil), within [lo, hi]; a
// refusal concerns field.
func formInt(field, what, raw string, lo, hi int) (*int, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return nil, badField(field, "%s must be a whole number from %d to %d, not %q", what, lo, hi, raw)
	}
	return &n, nil
}
