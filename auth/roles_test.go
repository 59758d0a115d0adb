package auth

import "testing"

// TestEveryRoleHasItsOwnIDAndTitle: each role is labelled, and no two share an id or a title
// (an id names one role for good).
func TestEveryRoleHasItsOwnIDAndTitle(t *testing.T) {
	ids, titles := map[int32]Role{}, map[string]Role{}
	for _, r := range Roles {
		if r.ID() <= 0 || r.Title() == "" || r.Description() == "" {
			t.Errorf("role %s has id %d, title %q, description %q", r, r.ID(), r.Title(), r.Description())
		}
		if other, ok := ids[r.ID()]; ok {
			t.Errorf("roles %s and %s share the id %d", r, other, r.ID())
		}
		if other, ok := titles[r.Title()]; ok {
			t.Errorf("roles %s and %s share the title %q", r, other, r.Title())
		}
		ids[r.ID()], titles[r.Title()] = r, r
		if got, ok := RoleByID(int64(r.ID())); !ok || got != r {
			t.Errorf("RoleByID(%d) = %s, %v; want %s", r.ID(), got, ok, r)
		}
	}
	if r, ok := RoleByID(0); ok {
		t.Errorf("RoleByID(0) = %s", r)
	}
}
