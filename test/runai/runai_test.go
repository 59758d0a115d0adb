// Package runai runs runai-steps.sh, a shell script that follows NVIDIA Run:ai's documented API
// steps with curl, against a real Arbiter server (server.Serve over PostgreSQL, no cluster).
package runai

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/servetest"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
)

func TestMain(m *testing.M) { testdb.Main(m) }

const adminPassword = "runai-steps-admin-password"

// serve runs server.Serve without a cluster until the test ends and returns its URL.
func serve(t *testing.T) string {
	t.Helper()
	cfg, err := server.ParseConfig("serve", []string{"--database-url", testdb.NewURL(t)}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.DataDir, cfg.Kubeconfig, cfg.AdminPassword = "127.0.0.1:0", t.TempDir(), server.NoCluster, adminPassword
	return servetest.Serve(t, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// call sends a request and decodes a 2xx JSON answer into out.
func call(t *testing.T, req *http.Request, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), 30*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		t.Fatalf("%s %s answered %d: %s", req.Method, req.URL.Path, res.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("%s %s: %v in %s", req.Method, req.URL.Path, err, body)
	}
}

// TestRunAIStepsScript: with a wrong secret the script stops at its first step. Then an admin makes an API key for a service account (getting a token with
// the password grant, as Run:ai's "API access setup" does), then runai-steps.sh, given only the
// key's client id and secret, follows Run:ai's steps; the mapping it changed is read back.
func TestRunAIStepsScript(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("runai-steps.sh needs %s (.ci/run installs it): %v", tool, err)
		}
	}
	base := serve(t)
	script := func(ctx context.Context, env ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "bash", "runai-steps.sh")
		cmd.Env = append(os.Environ(), append([]string{"BASE_URL=" + base}, env...)...)
		return cmd
	}

	// With a wrong secret the script stops at its first step and shows the server's sentence.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := script(ctx, "CLIENT_ID=6723b9d7-73d1-5e4c-a494-d8fdeddc541c", "CLIENT_SECRET=wrong").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "answered 401") || !strings.Contains(string(out), "invalid_client") || strings.Contains(string(out), "workload types") {
		t.Fatalf("runai-steps.sh with a wrong secret: %v\n%s", err, out)
	}

	var admin struct {
		AccessToken string `json:"access_token"`
	}
	req, _ := http.NewRequest("POST", base+"/api/v2/token", strings.NewReader(url.Values{"grant_type": {"password"},
		"username": {"admin"}, "password": {adminPassword}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	call(t, req, &admin)
	bearer := func(r *http.Request) *http.Request {
		r.Header.Set("Authorization", "Bearer "+admin.AccessToken)
		return r
	}

	var key struct{ ClientID, ClientSecret string }
	req, _ = http.NewRequest("POST", base+"/api/v1/api-keys", strings.NewReader(`{"name":"runai-steps","role":"admin"}`))
	req.Header.Set("Content-Type", "application/json")
	call(t, bearer(req), &key)
	if key.ClientID == "" || key.ClientSecret == "" {
		t.Fatalf("the new API key's answer has no client id or secret: %+v", key)
	}

	out, err = script(ctx, "CLIENT_ID="+key.ClientID, "CLIENT_SECRET="+key.ClientSecret, "WORKLOAD_TYPE=PyTorchJob", "PRIORITY=high").CombinedOutput()
	if err != nil {
		t.Fatalf("runai-steps.sh failed (%v):\n%s", err, out)
	}
	t.Logf("runai-steps.sh:\n%s", out)
	if !strings.Contains(string(out), "expires in 3600 s") || !strings.Contains(string(out), "all steps passed") {
		t.Errorf("runai-steps.sh did not report every step:\n%s", out)
	}

	var pytorch struct {
		PriorityName *string `json:"priorityName"`
	}
	id := store.SeedID("workload-type", "kubeflow.org/PyTorchJob").String()
	req, _ = http.NewRequest("GET", base+"/api/v1/workload-types/"+id, nil)
	call(t, bearer(req), &pytorch)
	if pytorch.PriorityName == nil || *pytorch.PriorityName != "high" {
		t.Errorf("after the script PyTorchJob's priority is %v, want high", pytorch.PriorityName)
	}
	// The script's change is the service account's, in the audit log.
	var log struct {
		Entries []struct {
			Subject, SubjectType, EntityType, Action string
		} `json:"entries"`
	}
	req, _ = http.NewRequest("GET", base+"/api/v1/audit/log?filterBy=entityType==workload-type", nil)
	call(t, bearer(req), &log)
	if len(log.Entries) == 0 || log.Entries[0].Subject != key.ClientID || log.Entries[0].SubjectType != "api-key" {
		t.Errorf("the workload type change is audited as %+v, want by the API key %s", log.Entries, key.ClientID)
	}
}
