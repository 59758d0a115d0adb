package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/labstack/echo/v4"
)

// FuzzDecodeRunAIAccessRule checks that any body of Run:ai's create_access_rule either is
// refused with a 4xx and a sentence or becomes a rule Arbiter may hold: a user or group with a
// subject of clean text, one of Arbiter's roles at a scope it may be bound at.
func FuzzDecodeRunAIAccessRule(f *testing.F) {
	for _, s := range []string{
		`{"subjectId":"ada@example.org","subjectType":"user","roleId":5,"scopeId":"6723b9d7-73d1-5e4c-a494-d8fdeddc541c","scopeType":"project"}`,
		`{"subjectId":"ml","subjectType":"group","roleId":1,"scopeId":"1","scopeType":"tenant"}`,
		`{"subjectId":"ml","subjectType":"group","roleId":1,"scopeId":"94b6171f-7140-5fdd-831e-35e9df1d9f38","scopeType":"cluster","clusterId":"94b6171f-7140-5fdd-831e-35e9df1d9f38"}`,
		`{"subjectId":"ml","subjectType":"group","roleId":1,"scopeId":"","scopeType":"system"}`,
		`{"subjectId":"ci","subjectType":"app","roleId":5,"scopeId":"1","scopeType":"system"}`,
		`{"subjectId":"a","subjectType":"user","roleId":2147483648,"scopeId":"1","scopeType":"system"}`,
		`{"subjectId":"a","subjectType":"user","roleId":2.5,"scopeId":"1","scopeType":"system"}`,
		`{"subjectId":"a","subjectType":"user","roleId":-1,"scopeId":"1","scopeType":"system"}`,
		`{"subjectId":"a\u0000","subjectType":"user","roleId":5,"scopeId":"1","scopeType":"system"}`,
		"{\"subjectId\":\"\xff\",\"subjectType\":\"user\",\"roleId\":5,\"scopeId\":\"1\",\"scopeType\":\"system\"}",
		`{"subjectId":"a","subjectId":"b","subjectType":"user","roleId":5,"scopeId":"1","scopeType":"system"}`,
		`{"subjectId":null,"subjectType":"user","roleId":null,"scopeId":null,"scopeType":null}`,
		`{"SubjectID":"a"}`, `{}`, `[]`, `null`, `{`, `{}{}`, `{"roleId":"5"}`, `{"clusterId":1}`,
		`{"subjectId":"` + strings.Repeat("é", 501) + `","subjectType":"user","roleId":5,"scopeId":"1","scopeType":"system"}`,
	} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		var r runAIAccessRuleRequest
		err := decodeJSON(jsonContext(e, http.MethodPost, body), &r, runAIAccessRuleFields...)
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		n, err := r.rule(store.DefaultClusterID.String())
		if err != nil {
			// A refusal of the rule may be the store's kind of error (a foreign clusterId).
			if status, msg := statusOf(err); status != http.StatusBadRequest || msg == "" || fieldOf(err) == "" {
				t.Fatalf("body %q: status %d message %q field %q (%v)", body, status, msg, fieldOf(err), err)
			}
			return
		}
		role, err := auth.ParseRole(n.Role)
		if err != nil || (n.SubjectType != "user" && n.SubjectType != "group") || !cleanText(n.Subject) || n.Subject == "" {
			t.Fatalf("body %q: accepted %+v", body, n)
		}
		scope := auth.Scope{Type: auth.ScopeType(n.ScopeType)}
		if n.ScopeID != nil {
			scope.ID = n.ScopeID.String()
		}
		if err := auth.ValidateGrant(role, scope); err != nil {
			t.Fatalf("body %q: accepted %+v, which Arbiter may not hold: %v", body, n, err)
		}
	})
}

// FuzzRunAIRuleQuery checks that any query string of Run:ai's access rule list either is read
// into filters on the list's own fields or is refused with a 400 and a sentence.
func FuzzRunAIRuleQuery(f *testing.F) {
	for _, s := range []string{"", "filterBy=roleId==5,scopeType==system&sortBy=roleName&sortOrder=desc&offset=1&limit=2",
		"roleId=0", "roleId=2147483648", "lastUpdated=2026-01-31T09:00:00Z", "lastUpdated=yesterday", "includeDeleted=maybe",
		"clusterId=94b6171f-7140-5fdd-831e-35e9df1d9f38", "clusterId=", "subjectIds=a,,b", "subjectIdFilter=%00", "filterBy=subject==a",
		"search=%ff", "limit=0", "offset=-1", "sortBy=id"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, _, err := runAIRuleQuery(v, store.DefaultClusterID.String())
		if err != nil {
			if status, msg := statusOf(err); status != http.StatusBadRequest || msg == "" {
				t.Fatalf("query %q: status %d message %q (%v)", raw, status, msg, err)
			}
			return
		}
		for _, filter := range q.Filters {
			if _, ok := store.NamedAccessRuleSpec.Fields[filter.Field]; !ok {
				t.Fatalf("query %q: a filter on %q, which the list does not have", raw, filter.Field)
			}
		}
	})
}
