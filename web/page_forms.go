package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// How the organization pages' forms answer. Each table row edits inline with htmx: a change
// posts one part of the row (a quota line, the policy, the name...) and the answer is the row
// again, saying Saved or showing the refusal next to the part it concerns. Without JavaScript
// the same forms post and redirect back. Creating is an ordinary form; a refused create shows
// the page again with the values typed and the message next to its field, or at the top of
// the form when it names no field of the form.

func canManageOrg(c echo.Context) bool { return can(c, auth.ManageSystem, auth.System) }

// pageQuery reads a page's list parameters with the API's machinery; extra filters are
// added by the caller.
func pageQuery(c echo.Context, spec listquery.Spec, filters ...string) (listquery.Query, error) {
	v := url.Values{}
	for _, k := range []string{"sortBy", "sortOrder", "search", "offset"} {
		if x := c.QueryParam(k); x != "" {
			v.Set(k, x)
		}
	}
	if len(filters) > 0 {
		v.Set("filterBy", strings.Join(filters, ","))
	}
	return listquery.Parse(v, spec)
}

// formRefusal is a refused create form's message and the field it names, if any; the page
// shows it next to that field, or at the top of the form when the form has no such field.
func formRefusal(err error) views.FieldError {
	_, msg := statusOf(err)
	return views.FieldError{Field: fieldOf(err), Message: msg}
}

// rowResult renders a row after an inline change: with htmx the row (status of the refusal,
// if any); without JavaScript a redirect back to the page (the route named back), or the
// error page.
func rowResult(c echo.Context, back string, saveErr error, row func(status int) error) error {
	if !isHTMX(c) {
		if saveErr != nil {
			return saveErr
		}
		return c.Redirect(http.StatusSeeOther, pathTo(c, back))
	}
	status := http.StatusOK
	if saveErr != nil {
		status, _ = statusOf(saveErr)
	}
	return row(status)
}

// refusal places a refused inline change's message at field, or at the field the error
// names when the form edits several fields at once (field "").
func refusal(field string, err error) views.FieldError {
	if err == nil {
		return views.FieldError{}
	}
	if field == "" {
		return formRefusal(err)
	}
	_, msg := statusOf(err)
	return views.FieldError{Field: field, Message: msg}
}

// deleteRow answers a row's Delete button once the delete has run: with htmx nothing (the row
// goes) or the row again (made by row) showing the refusal; without JavaScript a redirect back
// to the page (the route named back), or the error page.
func deleteRow(c echo.Context, back string, delErr error, row func(refused views.FieldError) (templ.Component, error)) error {
	return rowResult(c, back, delErr, func(status int) error {
		if delErr == nil {
			return c.HTML(http.StatusOK, "") // htmx swaps the row for nothing
		}
		comp, err := row(refusal("delete", delErr))
		if err != nil {
			return err
		}
		return render(c, status, comp)
	})
}

// rowOutcome is what a row shows after a change of field ("" for the row's main form, or
// "quota:<pool id>"): Saved, or the refusal; a refused quota line keeps what was typed, so
// that the person can correct it.
func rowOutcome(c echo.Context, field string, saveErr error, quotas []views.QuotaCell) (saved string, refused views.FieldError) {
	if saveErr != nil && strings.HasPrefix(field, "quota:") {
		keepTyped(c, quotas, strings.TrimPrefix(field, "quota:"))
	}
	return savedField(saveErr, rowField(field)), refusal(field, saveErr)
}

// rowField names what a row's form saved: its own field, or "row" for the row's main form.
func rowField(field string) string {
	if field == "" {
		return "row"
	}
	return field
}

func savedField(err error, field string) string {
	if err != nil {
		return ""
	}
	return field
}

func formString(v string) store.Optional[string] {
	v = strings.TrimSpace(v)
	return store.Optional[string]{Set: true, Value: &v}
}

// formNamespaces splits the namespaces field (commas or spaces).
func formNamespaces(raw string) []string {
	return strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
}
