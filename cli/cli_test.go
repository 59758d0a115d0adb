package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/apiversion"
	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with what the commands print now")

// now is the fixed time of the tests' tables.
var now = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// answer is what the fake API answers to one request.
type answer struct {
	status int
	body   string
}

// fakeAPI is an httptest server answering fixed JSON by "METHOD path", and recording what it
// was asked; an unknown request is a 404 in the API's envelope.
type fakeAPI struct {
	*httptest.Server
	mu       sync.Mutex
	answers  map[string]answer
	requests []string
	bodies   map[string]string
	queries  map[string]string
	version  string
}

func newFakeAPI(t *testing.T, answers map[string]answer) *fakeAPI {
	t.Helper()
	f := &fakeAPI{answers: answers, bodies: map[string]string{}, queries: map[string]string{}, version: "2"}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		key := r.Method + " " + r.URL.Path
		f.requests = append(f.requests, key)
		b, _ := io.ReadAll(r.Body)
		f.bodies[key] = string(b)
		f.queries[key] = r.URL.Query().Get("filterBy")
		if f.version != "" {
			w.Header().Set(apiversion.Header, f.version)
		}
		a, ok := f.answers[key]
		if !ok {
			a = answer{404, `{"code":404,"message":"no route ` + key + `"}`}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) filterBy(key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries[key]
}

func (f *fakeAPI) body(key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[key]
}

// run runs the command line with args in a home of its own (ARBITER_CONFIG) and returns what
// it printed and its exit code.
type run struct {
	stdout, stderr string
	code           int
}

type cliEnv struct {
	t      *testing.T
	env    map[string]string
	stdin  string
	config string
}

func newCLI(t *testing.T) *cliEnv {
	config := filepath.Join(t.TempDir(), "arbiter", "config.yaml")
	return &cliEnv{t: t, env: map[string]string{"ARBITER_CONFIG": config}, config: config}
}

// signedIn keeps a sign-in to url valid for an hour.
func (c *cliEnv) signedIn(url string) *cliEnv {
	c.t.Helper()
	if err := saveConfig(c.config, Config{URL: url, Project: "team-a", Subject: "alice", AccessToken: "arbat_valid",
		AccessExpires: now.Add(time.Hour), RefreshToken: "arbrt_kept"}); err != nil {
		c.t.Fatal(err)
	}
	return c
}

func (c *cliEnv) run(args ...string) run {
	var out, errOut bytes.Buffer
	root := &cobra.Command{Use: "arbiter"}
	AddCommands(root, Streams{In: strings.NewReader(c.stdin), Out: &out, Err: &errOut,
		Env: func(k string) string { return c.env[k] }, Now: func() time.Time { return now }})
	code := Execute(context.Background(), root, args, &errOut)
	return run{out.String(), errOut.String(), code}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cli -update to write it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got; go test ./cli -update rewrites it):\n%s", name, d)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
