package web_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestAccessPagePicksByName: the Access page's forms choose a rule's subject and a rule's or
// key's scope by name: the subject field suggests the users who have signed in (by email, with
// their names) and the groups seen, the Scope picker lists the system, each department and each
// project (with its department); what is saved is the chosen department's or project's id, and
// the tables name the scope beside its id. The API still takes scopeType and scopeId.
func TestAccessPagePicksByName(t *testing.T) {
	t.Parallel()
	f := newWorkloadAPI(t, &fakeLabeler{})
	admin := tokenOf(f.srv)
	if _, err := f.st.UpsertOIDCUser(context.Background(), "https://idp.example", "sub-ada", "ada@example.org", "Ada Lovelace", []string{"ml-team"}, true); err != nil {
		t.Fatal(err)
	}
	doc := pageAs(t, f.srv, admin, "/access", nil, false, 200)
	form := byID(doc, "new-rule")
	if form == nil {
		t.Fatal("no rule form")
	}
	options := func(parent *html.Node) map[string]string {
		out := map[string]string{}
		for _, o := range findAll(parent, func(n *html.Node) bool { return n.Data == "option" }) {
			out[attr(o, "value")] = words(o)
		}
		return out
	}
	subject := inputNamed(form, "subject")
	list := byID(doc, attr(subject, "list"))
	if subject == nil || list == nil || list.Data != "datalist" {
		t.Fatalf("the subject field suggests nothing (list %q)", attr(subject, "list"))
	}
	if got := options(list); got["ada@example.org"] != "Ada Lovelace" || got["ml-team"] != "group" {
		t.Errorf("the subject suggestions are %v, want Ada by email and the group ml-team", got)
	}
	scope := inputNamed(form, "scope")
	if scope == nil || scope.Data != "select" {
		t.Fatal("the rule form has no Scope picker")
	}
	want := map[string]string{"system": "system (all of Arbiter)", "department:" + f.research: "research",
		"project:" + f.alpha: "alpha (department research)", "project:" + f.beta: "beta (department research)"}
	got := options(scope)
	for v, label := range want {
		if got[v] != label {
			t.Errorf("the Scope picker offers %q as %q, want %q (all: %v)", v, got[v], label, got)
		}
	}

	// Chosen by name, saved by id.
	pageAs(t, f.srv, admin, "/access/rules", url.Values{"subjectType": {"group"}, "subject": {"ml-team"}, "role": {"researcher"},
		"scope": {"project:" + f.alpha}}, false, 200)
	doc = pageAs(t, f.srv, admin, "/access/keys", url.Values{"name": {"ci"}, "role": {"viewer"}, "scope": {"department:" + f.research}, "days": {"5"}}, false, 201)
	r := doAs(t, f.srv, admin, "GET", "/api/v1/access-rules", "", "")
	var rules struct {
		Rules []struct{ Subject, ScopeType, ScopeID string }
	}
	if err := json.Unmarshal(r.body, &rules); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range rules.Rules {
		found = found || x.Subject == "ml-team" && x.ScopeType == "project" && x.ScopeID == f.alpha
	}
	if !found {
		t.Errorf("no rule for ml-team at project alpha's id: %s", r.body)
	}
	if k := doAs(t, f.srv, admin, "GET", "/api/v1/api-keys", "", ""); !strings.Contains(string(k.body), `"scopeType":"department","scopeId":"`+f.research+`"`) {
		t.Errorf("the key ci is not scoped to department research's id: %s", k.body)
	}
	// The tables name the scopes, with the ids beside them.
	rulesText, keysText := words(byID(doc, "rules-table")), words(byID(doc, "keys-table"))
	if !strings.Contains(rulesText, "project alpha "+f.alpha) {
		t.Errorf("the rules table reads %q, want project alpha and its id", rulesText)
	}
	if !strings.Contains(keysText, "department research "+f.research) {
		t.Errorf("the keys table reads %q, want department research and its id", keysText)
	}
	// The API (and a form without the picker) still take scopeType and scopeId.
	if r := doAs(t, f.srv, admin, "POST", "/api/v1/access-rules", "application/json",
		`{"subjectType":"user","subject":"bob@example.org","role":"viewer","scopeType":"project","scopeId":"`+f.beta+`"}`); r.status != 201 {
		t.Errorf("the API's access rule by id = %d: %s", r.status, r.body)
	}
	pageAs(t, f.srv, admin, "/access/rules", url.Values{"subjectType": {"user"}, "subject": {"carol@example.org"}, "role": {"viewer"},
		"scopeType": {"department"}, "scopeId": {f.research}}, false, 200)
	if r := doAs(t, f.srv, admin, "GET", "/api/v1/access-rules", "", ""); !strings.Contains(string(r.body), `"subject":"carol@example.org","role":"viewer","scopeType":"department","scopeId":"`+f.research+`"`) {
		t.Errorf("a form with scopeType and scopeId saved no such rule: %s", r.body)
	}
}
