package deploy

import (
	"bytes"
	"errors"
	"flag"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/arbiterhq/arbiter/server"
)

// serveFlags are the flags `arbiter serve` defines, read from its own usage text (what
// `arbiter serve -h` prints), so that a flag added or renamed there is seen here.
func serveFlags(t *testing.T) map[string]bool {
	t.Helper()
	var usage bytes.Buffer
	if _, err := server.ParseConfig("arbiter serve", []string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("arbiter serve -h: %v", err)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(usage.String(), -1) {
		flags[m[1]] = true
	}
	if !flags["database-url"] || !flags["addr"] {
		t.Fatalf("read %v from the usage text:\n%s", flags, usage.String())
	}
	return flags
}

// checkEnvAccepted fails for each ARBITER_* name that is no flag's environment twin: those
// would be ignored silently by `arbiter serve`.
func checkEnvAccepted(t *testing.T, where string, names []string) {
	t.Helper()
	twins := map[string]bool{}
	for f := range serveFlags(t) {
		twins[server.EnvName(f)] = true
	}
	for _, name := range names {
		if strings.HasPrefix(name, "ARBITER_") && !twins[name] {
			t.Errorf("%s sets %s, which no flag of arbiter serve reads", where, name)
		}
	}
}

// parseServe parses args with `arbiter serve`'s own parser, with env's literal values set
// (values from Secrets are checked by name only), after checking every ARBITER_* name in env.
func parseServe(t *testing.T, where string, args []string, env []corev1.EnvVar) server.Config {
	t.Helper()
	var names []string
	for _, e := range env {
		names = append(names, e.Name)
		if e.ValueFrom == nil && strings.HasPrefix(e.Name, "ARBITER_") {
			t.Setenv(e.Name, e.Value)
		}
	}
	checkEnvAccepted(t, where, names)
	var usage bytes.Buffer
	cfg, err := server.ParseConfig("arbiter serve", args, &usage)
	if err != nil {
		t.Fatalf("%s: arbiter serve %q: %v\n%s", where, args, err, usage.String())
	}
	return cfg
}
