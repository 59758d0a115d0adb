package views

import (
	"context"
	"strings"
	"testing"
)

// TestBreakableWrapsAtSensiblePoints: an identifier gets a <wbr> after . / _ - : and between a
// lower-case letter or digit and a capital, and nowhere else; its text is escaped.
func TestBreakableWrapsAtSensiblePoints(t *testing.T) {
	for in, want := range map[string]string{
		"VirtualMachineInstance":   "Virtual<wbr>Machine<wbr>Instance",
		"leaderworkerset.x-k8s.io": "leaderworkerset.<wbr>x-<wbr>k8s.<wbr>io",
		"NIMService":               "NIMService",
		"a<b>":                     "a&lt;b&gt;",
		"":                         "",
	} {
		var b strings.Builder
		if err := Breakable(in).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("Breakable(%q) = %q, want %q", in, b.String(), want)
		}
	}
}
