package web

import (
	"testing"

	"github.com/arbiterhq/arbiter/auth"
)

// TestEveryActionIsARunAIPermission: every action a role holds in Arbiter's authorization
// table says what it allows in Run:ai's terms, so no role's permissions leave out something
// it may do.
func TestEveryActionIsARunAIPermission(t *testing.T) {
	for _, role := range auth.Roles {
		for _, a := range role.Actions() {
			if len(runAIPermitsOf[a]) == 0 {
				t.Errorf("%s may %s, which runAIPermitsOf does not name in Run:ai's terms", role, a)
			}
		}
	}
}
