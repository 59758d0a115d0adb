package views

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/arbiterhq/arbiter/web/routenames"
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
