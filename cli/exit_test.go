package cli

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestExitCodes: each kind of failure ends with its documented code, the API's sentence on
// stderr.
func TestExitCodes(t *testing.T) {
	refusal := `{"code":400,"message":"project locked does not allow changing priority"}`
	api := newFakeAPI(t, map[string]answer{
		"GET /api/v1/workloads":                                      {200, `{"workloads":[` + waiting + `]}`},
		"PATCH /api/v1/workloads/" + waitingID:                       {400, refusal},
		"POST /api/v1/workloads/trainings/" + waitingID + "/suspend": {403, `{"code":403,"message":"only api-key:alice, who submitted resnet, or a manager of project team-a may change it"}`},
		"GET /api/v1/workload-priorities":                            {401, `{"code":401,"message":"the access token was not issued by this server or has expired"}`},
		"GET /api/v1/nodes":                                          {503, `{"code":503,"message":"the database does not answer"}`},
		"POST /api/v1/token":                                         {401, `{"code":401,"message":"the refresh token is not valid"}`},
	})
	down := newFakeAPI(t, nil)
	down.Close()
	cases := []struct {
		name   string
		url    string
		signed bool
		args   []string
		code   int
		stderr string
	}{
		{"a refused change", api.URL, true, []string{"set", "resnet", "-p", "team-a", "--priority", "high"}, ExitRefused, "project locked does not allow changing priority"},
		{"a forbidden stop", api.URL, true, []string{"stop", "resnet", "-p", "team-a"}, ExitRefused, "only api-key:alice, who submitted resnet"},
		{"no such workload", api.URL, true, []string{"describe", waitingID[:35] + "2"}, ExitNotFound, "no route"},
		{"a token refused and its refresh refused", api.URL, true, []string{"priorities"}, ExitSignedOut, "arbiter login " + api.URL},
		{"the server fails", api.URL, true, []string{"nodes"}, ExitUnavailable, "the database does not answer"},
		{"the server is down", down.URL, true, []string{"nodes"}, ExitUnavailable, "cannot be reached"},
		{"not signed in", api.URL, false, []string{"nodes", "--url", api.URL}, ExitSignedOut, "not signed in"},
		{"an unknown flag", api.URL, true, []string{"list", "--bogus"}, ExitUsage, "unknown flag: --bogus"},
		{"a missing argument", api.URL, true, []string{"describe"}, ExitUsage, "accepts 1 arg"},
		{"an unknown output", api.URL, true, []string{"nodes", "-o", "xml"}, ExitUsage, "-o xml is not an output format"},
		{"an unknown type", api.URL, true, []string{"submit", "notebook", "x", "-i", "busybox"}, ExitUsage, "notebook is not a type submit takes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newCLI(t)
			if c.signed {
				e.signedIn(c.url)
			}
			r := e.run(c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.stderr) {
				t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q", c.args, r.code, r.stderr, c.code, c.stderr)
			}
		})
	}
}

// TestLogin_KeepsTokensNotTheSecret: login with a key's secret from the environment keeps the
// token pair in a 0600 file, never the secret; with none to read and stdin no terminal, it
// asks nothing and exits 2.
func TestLogin_KeepsTokensNotTheSecret(t *testing.T) {
	api := newFakeAPI(t, map[string]answer{
		"POST /api/v1/token":        {200, `{"accessToken":"arbat_new","refreshToken":"arbrt_new","expiresIn":3600}`},
		"POST /api/v1/token/revoke": {200, `{}`},
	})
	e := newCLI(t)
	e.env["ARBITER_CLIENT_SECRET"] = "s3cret-value"
	r := e.run("login", api.URL, "--client-id", "0b6c3e0e-9a2f-4d6e-9d7c-5f3b1f1d2a11", "-p", "team-a")
	if r.code != ExitDone {
		t.Fatalf("login: exit %d %s", r.code, r.stderr)
	}
	if b := api.body("POST /api/v1/token"); !strings.Contains(b, `"clientSecret":"s3cret-value"`) || !strings.Contains(b, `"grantType":"client_credentials"`) {
		t.Errorf("the token request was %s", b)
	}
	info, err := os.Stat(e.config)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("the config file has permissions %v, want 0600", info.Mode().Perm())
	}
	kept, _ := os.ReadFile(e.config)
	if strings.Contains(string(kept), "s3cret-value") || !strings.Contains(string(kept), "arbrt_new") || !strings.Contains(string(kept), "project: team-a") {
		t.Errorf("the config file keeps:\n%s\nwant the refresh token and the project, never the secret", kept)
	}

	r = e.run("logout")
	if r.code != ExitDone || !strings.Contains(api.body("POST /api/v1/token/revoke"), "arbrt_new") {
		t.Errorf("logout: exit %d %s, revoke body %q", r.code, r.stderr, api.body("POST /api/v1/token/revoke"))
	}
	if kept, _ := os.ReadFile(e.config); strings.Contains(string(kept), "arbrt_new") || strings.Contains(string(kept), "arbat_new") {
		t.Errorf("after logout the config file still keeps a token:\n%s", kept)
	}

	noSecret := newCLI(t)
	if r := noSecret.run("login", api.URL, "--username", "alice"); r.code != ExitUsage || !strings.Contains(r.stderr, "ARBITER_PASSWORD") {
		t.Errorf("login without a password and no terminal: exit %d %q; want 2 naming $ARBITER_PASSWORD", r.code, r.stderr)
	}
	piped := newCLI(t)
	piped.stdin = "from-stdin\n"
	if r := piped.run("login", api.URL, "--username", "alice", "--password-stdin"); r.code != ExitDone || !strings.Contains(api.body("POST /api/v1/token"), `"password":"from-stdin"`) {
		t.Errorf("login --password-stdin: exit %d %q, body %s", r.code, r.stderr, api.body("POST /api/v1/token"))
	}
}

// TestExpiredAccessToken_IsRenewed: a kept access token that has expired is renewed with the
// refresh token before the call, and the new one kept.
func TestExpiredAccessToken_IsRenewed(t *testing.T) {
	api := newFakeAPI(t, map[string]answer{
		"POST /api/v1/token":              {200, `{"accessToken":"arbat_renewed","refreshToken":"arbrt_kept","expiresIn":3600}`},
		"GET /api/v1/workload-priorities": {200, `{"priorities":[]}`},
	})
	e := newCLI(t)
	if err := saveConfig(e.config, Config{URL: api.URL, AccessToken: "arbat_old", AccessExpires: now.Add(-time.Minute), RefreshToken: "arbrt_kept"}); err != nil {
		t.Fatal(err)
	}
	if r := e.run("priorities"); r.code != ExitDone {
		t.Fatalf("exit %d %s", r.code, r.stderr)
	}
	if b := api.body("POST /api/v1/token"); !strings.Contains(b, `"grantType":"refresh_token"`) || !strings.Contains(b, "arbrt_kept") {
		t.Errorf("the renewal sent %s", b)
	}
	if kept, _ := os.ReadFile(e.config); !strings.Contains(string(kept), "arbat_renewed") {
		t.Errorf("the renewed token is not kept:\n%s", kept)
	}
}

// TestAPIVersion_Said: a server of another API revision, or one that names none, is told on
// stderr with which side to update; the command still runs.
func TestAPIVersion_Said(t *testing.T) {
	for version, want := range map[string]string{
		"9": "speaks API version 9, newer than this command line's 2; update the arbiter binary",
		"1": "speaks API version 1, older than this command line's 2",
		"":  "names no API version: it is older than this command line",
		"2": "",
	} {
		api := newFakeAPI(t, map[string]answer{"GET /api/v1/workload-priorities": {200, `{"priorities":[]}`}})
		api.version = version
		r := newCLI(t).signedIn(api.URL).run("priorities")
		if r.code != ExitDone || (want == "" && r.stderr != "") || !strings.Contains(r.stderr, want) {
			t.Errorf("server API %q: exit %d, stderr %q; want %q", version, r.code, r.stderr, want)
		}
	}
}

// TestShellQuote: what follows -- reaches the API as words it splits back as a shell would.
func TestShellQuote(t *testing.T) {
	got := shellQuote([]string{"python", "train.py", "--name", "it's a run", `a\b`, ""})
	want := `python train.py --name 'it'\''s a run' 'a\b' ''`
	if got != want {
		t.Errorf("shellQuote = %s, want %s", got, want)
	}
}

// TestCompletion: cobra's completion scripts for bash, zsh and fish, and submit's types
// complete.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if r := newCLI(t).run("completion", shell); r.code != ExitDone || !strings.Contains(r.stdout, "arbiter") {
			t.Errorf("completion %s: exit %d, %d bytes", shell, r.code, len(r.stdout))
		}
	}
	if r := newCLI(t).run("__complete", "submit", ""); !strings.Contains(r.stdout, "training\nworkspace\ndistributed\ninference") {
		t.Errorf("submit's types do not complete: %q", r.stdout)
	}
}

// TestPrecedence: the project and the server come from the flag, else the environment, else
// the config file.
func TestPrecedence(t *testing.T) {
	fromConfig := newFakeAPI(t, fixtures)
	fromEnv := newFakeAPI(t, fixtures)
	fromFlag := newFakeAPI(t, fixtures)
	for _, c := range []struct {
		name                 string
		env                  map[string]string
		args                 []string
		wantServer           *fakeAPI
		wantProjectInFilters string
	}{
		{"the config file", nil, nil, fromConfig, "projectName==team-a"},
		{"the environment", map[string]string{"ARBITER_URL": fromEnv.URL, "ARBITER_PROJECT": "env-project"}, nil, fromEnv, "projectName==env-project"},
		{"the flags", map[string]string{"ARBITER_URL": fromEnv.URL, "ARBITER_PROJECT": "env-project"}, []string{"--url", fromFlag.URL, "-p", "flag-project"}, fromFlag, "projectName==flag-project"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newCLI(t).signedIn(fromConfig.URL)
			for k, v := range c.env {
				e.env[k] = v
			}
			if r := e.run(append([]string{"list"}, c.args...)...); r.code != ExitDone {
				t.Fatalf("exit %d %s", r.code, r.stderr)
			}
			if got := c.wantServer.filterBy("GET /api/v1/workloads"); got != c.wantProjectInFilters {
				t.Errorf("the list asked %s for filterBy %q, want %q", c.wantServer.URL, got, c.wantProjectInFilters)
			}
		})
	}
}
