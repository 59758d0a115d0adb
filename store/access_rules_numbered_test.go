package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// TestNamedAccessRulesAreNumberedAndNamedByTheirScope: rules are numbered in the order they are
// made, named by their project's name (the system scope by the selection's name and id), read
// by number, paged with their total, and selected for a person by email (whatever its case) or
// by one of their groups.
func TestNamedAccessRulesAreNumberedAndNamedByTheirScope(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	system := store.Actor{Subject: "test", SubjectType: "system"}
	alpha := projectInDepartment(ctx, t, st, system, "ops", "alpha")
	for _, n := range []store.NewAccessRule{
		{SubjectType: "user", Subject: "Ada@Example.org", Role: "viewer", ScopeType: "project", ScopeID: &alpha.ID},
		{SubjectType: "group", Subject: "ml-team", Role: "researcher", ScopeType: "system"},
		{SubjectType: "user", Subject: "bob@example.org", Role: "admin", ScopeType: "system"},
	} {
		if _, err := st.CreateAccessRule(ctx, n, system); err != nil {
			t.Fatal(err)
		}
	}
	sel := store.RuleSelection{SystemScopeID: "1", SystemScopeName: "system"}
	describe := func(rules []store.NamedAccessRule) string {
		var out []string
		for _, r := range rules {
			out = append(out, fmt.Sprintf("%d %s %s@%s(%s)", r.Number, r.Subject, r.Role, r.ScopeKey, r.ScopeName))
		}
		return strings.Join(out, ", ")
	}
	page, total, err := st.NamedAccessRules(ctx, listquery.Query{Limit: 2}, sel)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("1 Ada@Example.org viewer@%s(alpha), 2 ml-team researcher@1(system)", alpha.ID)
	if diff := cmp.Diff(want, describe(page)); diff != "" || total != 3 {
		t.Errorf("the first page of two of %d rules (-want +got):\n%s", total, diff)
	}
	byRole, _, err := st.NamedAccessRules(ctx, listquery.Query{Limit: 10, SortBy: "roleId", Desc: true}, sel)
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(byRole); !strings.HasPrefix(got, "1 Ada") || !strings.HasSuffix(got, "3 bob@example.org admin@1(system)") {
		t.Errorf("sorted by role id, last first: %s", got)
	}

	ada := sel
	ada.Holder = &store.RuleHolder{Subject: "https://idp.example sub-ada", Email: "ada@example.org", Groups: []string{"ml-team"}}
	mine, total, err := st.NamedAccessRules(ctx, listquery.Query{Limit: 10}, ada)
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(mine); total != 2 || got != want {
		t.Errorf("Ada's rules (%d) are %s, want %s", total, got, want)
	}
	if n, err := st.CountNamedAccessRules(ctx, listquery.Query{Search: "ALPHA"}, ada); err != nil || n != 1 {
		t.Errorf("Ada's rules searched for ALPHA: %d (%v), want 1", n, err)
	}

	third, err := st.NamedAccessRule(ctx, 3, sel)
	if err != nil || third.Subject != "bob@example.org" || third.ScopeName != "system" {
		t.Errorf("rule 3 is %+v (%v)", third, err)
	}
	if _, err := st.NamedAccessRule(ctx, 3, ada); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rule 3, not Ada's, read among hers: %v", err)
	}
}
