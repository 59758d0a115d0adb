package runai

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/store"
)

// readmeProcedure is the shell block of README.md's API procedure, as written, and what the
// README says every refusal looks like.
func readmeProcedure(t *testing.T) (block string, envelope []string) {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const heading = "## Changing a workload type's default priority"
	_, section, ok := strings.Cut(string(readme), heading)
	if !ok {
		t.Fatalf("README.md has no section %q", heading)
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("README.md's section %q has no sh block", heading)
	}
	rest := section[strings.Index(section, m[0])+len(m[0]):]
	e := regexp.MustCompile("not a success is `\\{([^}]*)\\}`").FindStringSubmatch(rest)
	if e == nil {
		t.Fatalf("README.md's section %q does not say what a refusal looks like after its block", heading)
	}
	for _, k := range strings.Split(e[1], ",") {
		k = strings.TrimSpace(k)
		if name, _, _ := strings.Cut(k, ":"); strings.HasPrefix(name, `"`) {
			envelope = append(envelope, strings.Trim(name, `" `))
		}
	}
	slices.Sort(envelope)
	return m[1], envelope
}

// TestREADMEProcedure runs README.md's API procedure as written, with bash and curl, against a
// real server: given only the server's address and the admin's password in the environment it
// names, every step must answer 2xx (the block runs with -e and pipefail, and its calls fail on
// a refusal), PyTorchJob's priority is high after step 3 and the category's default at the
// end, both changes are the admin's in the audit log, and a refusal has the fields the README
// says it has.
func TestREADMEProcedure(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's procedure needs %s: %v", tool, err)
		}
	}
	block, envelope := readmeProcedure(t)
	base := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", block)
	cmd.Env = append(os.Environ(), "BASE_URL="+base, "ARBITER_ADMIN_PASSWORD="+adminPassword)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's procedure failed (%v):\n%s", err, out)
	}
	t.Logf("the README's procedure:\n%s", out)
	if !strings.Contains(string(out), `"priorityName":"high"`) {
		t.Errorf("step 3 did not answer PyTorchJob with priority high:\n%s", out)
	}

	var admin struct {
		AccessToken string `json:"access_token"`
	}
	req, _ := http.NewRequest("POST", base+"/api/v2/token", strings.NewReader("grant_type=password&username=admin&password="+adminPassword))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	call(t, req, &admin)
	get := func(path string, out any) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+admin.AccessToken)
		call(t, req, out)
	}
	var pytorch struct {
		PriorityName  string  `json:"priorityName"`
		OwnPriorityID *string `json:"ownPriorityId"`
	}
	get("/api/v1/workload-types/"+store.SeedID("workload-type", "kubeflow.org/PyTorchJob").String(), &pytorch)
	if pytorch.OwnPriorityID != nil || pytorch.PriorityName != "low" {
		t.Errorf("after the procedure PyTorchJob's own priority is %v and its priority %q, want none and Train's default, low", pytorch.OwnPriorityID, pytorch.PriorityName)
	}
	var log struct {
		Entries []struct {
			Subject string         `json:"subject"`
			Action  string         `json:"action"`
			Changes map[string]any `json:"changes"`
		} `json:"entries"`
	}
	get("/api/v1/audit/log?filterBy=entityType==workload-type", &log)
	if len(log.Entries) != 2 || log.Entries[0].Subject != "admin" || log.Entries[1].Subject != "admin" {
		t.Errorf("the procedure's changes are audited as %+v, want two by admin", log.Entries)
	}

	// A refusal, as the README describes it.
	req, _ = http.NewRequest("PUT", base+"/api/v1/workload-types/"+store.SeedID("workload-type", "kubeflow.org/PyTorchJob").String(),
		strings.NewReader(`{"priorityId":"00000000-0000-0000-0000-000000000000"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+admin.AccessToken)
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var refusal map[string]any
	if err := json.NewDecoder(res.Body).Decode(&refusal); err != nil || res.StatusCode != 400 {
		t.Fatalf("a PUT with an unknown priorityId answered %d (%v)", res.StatusCode, err)
	}
	var got []string
	for k := range refusal {
		got = append(got, k)
	}
	slices.Sort(got)
	if diff := cmp.Diff(envelope, got); diff != "" {
		t.Errorf("a refusal's fields, as the README says them (-README +answer):\n%s", diff)
	}
}
