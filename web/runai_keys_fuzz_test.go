package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/labstack/echo/v4"
)

// FuzzDecodeServiceAccount checks that a service account body either is refused with a 4xx and
// a sentence or decodes into a named account with a role it may hold at its scope, and an
// expiry within the bound.
func FuzzDecodeServiceAccount(f *testing.F) {
	for _, s := range []string{`{"name":"service-account-123"}`, `{"name":"ci","role":"viewer"}`,
		`{"name":"ci","role":"researcher","scopeType":"project","scopeId":"6723b9d7-73d1-5e4c-a494-d8fdeddc541c"}`,
		`{"name":"ci","role":"admin","scopeType":"project","scopeId":"6723b9d7-73d1-5e4c-a494-d8fdeddc541c"}`,
		`{"name":"ci","role":"viewer","scopeId":"x"}`, `{"name":"ci","role":"viewer","expiresAt":"2999-01-01T00:00:00Z"}`,
		`{"name":"ci","role":"viewer","expiresAt":"soon"}`, `{"name":"  ","role":"viewer"}`, `{"name":"a\u0000","role":"viewer"}`,
		"{\"name\":\"\xff\",\"role\":\"viewer\"}", `{"name":1}`, `{"Name":"x"}`, `{"name":"a","name":"b"}`, `[]`, `null`, `{`, `{}{}`} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		r, err := decodeServiceAccount(jsonContext(e, http.MethodPost, body))
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		if strings.TrimSpace(r.Name) == "" || !cleanText(r.Name) || utf8.RuneCountInString(r.Name) > maxAPIKeyName {
			t.Fatalf("body %q: accepted name %q", body, r.Name)
		}
		role, scope, _, err := r.check()
		if err != nil || auth.ValidateGrant(role, scope) != nil {
			t.Fatalf("body %q: accepted a binding createAPIKey refuses: %v", body, err)
		}
		if r.ExpiresAt != nil && time.Until(*r.ExpiresAt) > maxKeyLifetime {
			t.Fatalf("body %q: accepted expiry %v", body, r.ExpiresAt)
		}
	})
}

// FuzzDecodeServiceAccountPatch checks that a patch is refused with a 4xx and a sentence
// unless it says enabled true or false.
func FuzzDecodeServiceAccountPatch(f *testing.F) {
	for _, s := range []string{`{"enabled":true}`, `{"enabled":false}`, `{}`, `{"enabled":null}`, `{"enabled":"true"}`,
		`{"enabled":1}`, `{"Enabled":true}`, `{"enabled":true,"enabled":false}`, `{"enabled":true,"name":"x"}`, `[]`, `{`} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		enabled, err := decodeServiceAccountPatch(jsonContext(e, http.MethodPatch, body))
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		if want := strings.Contains(body, "true"); enabled != want {
			t.Fatalf("body %q: decoded enabled %v", body, enabled)
		}
	})
}

// FuzzDecodeAccessKey checks that an access key body is refused with a 4xx and a sentence or
// decodes into a name the store keeps and an expiry within the bound.
func FuzzDecodeAccessKey(f *testing.F) {
	for _, s := range []string{`{"name":"access-key-name"}`, `{"name":"ci","expiresAt":"2030-01-01T00:00:00Z"}`,
		`{"name":"ci","expiresAt":"2999-01-01T00:00:00Z"}`, `{"name":"ci","role":"admin"}`, `{"name":""}`, `{"name":"\u0000"}`,
		"{\"name\":\"\xc3\x28\"}", `{"name":["x"]}`, `{"name":"a","name":"b"}`, `{}`, `null`, `{`} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		name, expires, err := decodeAccessKey(jsonContext(e, http.MethodPost, body))
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		if strings.TrimSpace(name) == "" || !cleanText(name) || utf8.RuneCountInString(name) > maxAPIKeyName {
			t.Fatalf("body %q: accepted name %q", body, name)
		}
		if time.Until(expires) > maxKeyLifetime {
			t.Fatalf("body %q: accepted expiry %v", body, expires)
		}
	})
}

// FuzzAccessKeyFilter checks the administration list's query: refused with a 4xx and a
// sentence, or a clientId that is a UUID and a createdBy PostgreSQL can compare.
func FuzzAccessKeyFilter(f *testing.F) {
	for _, s := range []string{"", "clientId=6723b9d7-73d1-5e4c-a494-d8fdeddc541c", "clientId=x", "createdBy=test%40run.ai",
		"createdBy=%00", "createdBy=%ff", "clientId=6723b9d773d15e4ca494d8fdeddc541c", "clientId=&createdBy="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // the router answers a malformed query before any handler
		}
		filter, err := accessKeyFilterOf(q)
		if err != nil {
			checkRefusal(t, raw, err)
			return
		}
		if !cleanText(filter.CreatedBy) || utf8.RuneCountInString(filter.CreatedBy) > maxRuleSubject {
			t.Fatalf("query %q: accepted createdBy %q", raw, filter.CreatedBy)
		}
	})
}
