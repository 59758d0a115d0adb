package cli

import (
	"strings"
	"testing"
)

// TestTables_Golden: each command's -o table output, from the fake API's answers, is what
// testdata holds (go test ./cli -update rewrites it after a deliberate change).
func TestTables_Golden(t *testing.T) {
	api := newFakeAPI(t, fixtures)
	for name, args := range map[string][]string{
		"list.txt":       {"list", "-p", "team-a"},
		"list-all.txt":   {"list", "-A"},
		"describe.txt":   {"describe", "resnet", "-p", "team-a"},
		"nodes.txt":      {"nodes"},
		"projects.txt":   {"projects"},
		"types.txt":      {"types"},
		"priorities.txt": {"priorities"},
		"dry-run.txt":    {"submit", "training", "urgent", "-p", "team-a", "-i", "busybox", "-g", "2", "--priority", "high", "--dry-run"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newCLI(t).signedIn(api.URL).run(args...)
			if r.code != ExitDone || r.stderr != "" {
				t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
			}
			golden(t, name, r.stdout)
		})
	}
}

// TestHelp_Golden: every command's --help, with its examples, is what testdata holds.
func TestHelp_Golden(t *testing.T) {
	for _, cmd := range []string{"login", "logout", "submit", "list", "describe", "set", "stop", "run", "delete", "projects", "nodes", "types", "priorities"} {
		t.Run(cmd, func(t *testing.T) {
			r := newCLI(t).run(cmd, "--help")
			if r.code != ExitDone || !strings.Contains(r.stdout, "Examples:") {
				t.Fatalf("%s --help: exit %d, no examples:\n%s%s", cmd, r.code, r.stdout, r.stderr)
			}
			golden(t, "help-"+cmd+".txt", r.stdout)
		})
	}
}
