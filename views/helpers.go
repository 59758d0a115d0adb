package views

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/arbiterhq/arbiter/internal/routenames"
)

// htmxConfig keeps htmx within a strict Content-Security-Policy (no inline styles or
// scripts) and lets 4xx fragments (a refused change with its reason) be swapped in.
const htmxConfig = `{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,` +
	`"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},` +
	`{"code":"4..","swap":true,"error":false},{"code":"...","swap":false,"error":true}]}`

func csrfHeaders(token string) string {
	if token == "" {
		return "{}"
	}
	b, _ := json.Marshal(map[string]string{"X-CSRF-Token": token})
	return string(b)
}

// navVisible hides admin-only navigation from everyone else.
func navVisible(p Page, item NavItem) bool {
	if item.Route == routenames.Submit {
		return p.CanSubmit
	}
	return p.CanAdmin || !adminOnlyNav[item.Route]
}

func urlEscape(s string) string { return url.QueryEscape(s) }

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return "Error"
}

// Deref is the text an optional string holds, "" when it holds none.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func itoa(n int) string { return strconv.Itoa(n) }

func orDefault(s *string) string {
	if s == nil {
		return "Category default"
	}
	return *s
}

func countText(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// InputSize is the size attribute of a text input in a table row: as many characters as its
// value has and one more, at least 8 and at most 40, so that the value shows whole and the
// column is as wide as its longest value.
func InputSize(value string) string {
	return strconv.Itoa(min(40, max(8, utf8.RuneCountInString(value)+1)))
}

// breakParts splits s where Breakable lets it wrap.
func breakParts(s string) []string {
	var parts []string
	start := 0
	rs := []rune(s)
	for i := 1; i < len(rs); i++ {
		a, b := rs[i-1], rs[i]
		after := strings.ContainsRune("./_-:", a)
		camel := (unicode.IsLower(a) || unicode.IsDigit(a)) && unicode.IsUpper(b)
		if after || camel {
			parts = append(parts, string(rs[start:i]))
			start = i
		}
	}
	return append(parts, string(rs[start:]))
}

// Breakable shows an identifier (a kind, an API group, a name, an id) that may wrap only at
// sensible points: after . / _ - : and between a lower-case letter or digit and a capital
// (VirtualMachine|Instance, serving.|kserve.|io), never inside a word. The points are <wbr>
// elements, which add no text (a copy of the name or a screen reader reads it whole).
func Breakable(s string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		for i, part := range breakParts(s) {
			if i > 0 {
				if _, err := io.WriteString(w, "<wbr>"); err != nil {
					return err
				}
			}
			if _, err := io.WriteString(w, html.EscapeString(part)); err != nil {
				return err
			}
		}
		return nil
	})
}
