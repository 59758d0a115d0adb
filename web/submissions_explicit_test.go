package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSubmitKeepsExplicitValues (S9's clarification): a priority or preemptibility the caller
// gave is written to the top owner even when it equals today's default, so that a later change
// of the default does not change it; what the caller left out follows the defaults. A project
// that forbids changes accepts an explicit value equal to what its policy gives, and refuses
// any other.
func TestSubmitKeepsExplicitValues(t *testing.T) {
	t.Parallel()
	f := newSubmitAPI(t)
	admin := tokenOf(f.srv)
	type labels struct{ Priority, Preemptibility string }
	for _, tc := range []struct {
		name, project, spec string
		status              int
		want                labels
	}{
		{"explicit values equal to the defaults are kept", f.alpha, `,"priorityClass":"low","preemptibility":"preemptible"`, 202, labels{"low", "preemptible"}},
		{"absent values follow the defaults", f.alpha, ``, 202, labels{}},
		{"a project without priority changes accepts its own default", f.beta, `,"priorityClass":"low"`, 202, labels{Priority: "low"}},
		{"a project without preemptibility changes accepts the type's", f.gamma, `,"priorityClass":"medium-low","preemptibility":"preemptible"`, 202, labels{"medium-low", "preemptible"}},
	} {
		before := f.cluster.count()
		r := f.submit(t, admin, "trainings", fmt.Sprintf(`{"name":"job","useGivenNameAsPrefix":true,"projectId":%q,"spec":{"image":"python"%s}}`, tc.project, tc.spec))
		if r.status != tc.status || f.cluster.count() != before+1 {
			t.Errorf("%s: POST = %d %s", tc.name, r.status, r.body)
			continue
		}
		w := f.cluster.last(t)
		if diff := cmp.Diff(tc.want, labels{w.Priority, w.Preemptibility}); diff != "" {
			t.Errorf("%s: the labels the Job gets (-want +got):\n%s", tc.name, diff)
		}
	}
	// Anything else stays refused where the policy forbids it.
	for _, tc := range []struct{ project, spec, want string }{
		{f.beta, `,"priorityClass":"medium"`, "project beta does not allow changing priority"},
		{f.gamma, `,"preemptibility":"non-preemptible"`, "project gamma does not allow changing preemptibility"},
	} {
		r := f.submit(t, admin, "trainings", fmt.Sprintf(`{"name":"job","projectId":%q,"spec":{"image":"python"%s}}`, tc.project, tc.spec))
		if r.status != 400 || !strings.Contains(r.refusal(t).Message, tc.want) {
			t.Errorf("POST %s = %d %s, want 400 with %q", tc.spec, r.status, r.body, tc.want)
		}
	}
}
