package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
)

// TestRunAIStepsScriptSubmitsATraining runs test/runai/runai-steps.sh, which follows Run:ai's
// documented steps unchanged, to its end on the local control plane: with an API key's client
// credentials it gets a token from /api/v2/token, lists the workload types, sets a type's
// priority, and submits a standard training to a project. The training is a Job in the
// project's namespace, typed, submitted by the key, and scheduled.
// (test/runai runs the same script without a cluster, up to the submission.) Without
// --cluster-id the submission would be refused: the script names another cluster.
func TestRunAIStepsScriptSubmitsATraining(t *testing.T) {
	t.Parallel()
	// The script sends the cluster id of Run:ai's own example, as a team moving from Run:ai
	// sends its cluster's: the installation keeps that id (serve --cluster-id).
	e := newEnv(t, 1, 2, func(c *server.Config) { c.ClusterID = "d73a738f-fab3-430a-8fa3-5241493d7128" })
	ns := e.project("runai", 2, store.PolicyUpdate{})

	id := uuid.New()
	token, hash := auth.NewAPIKey(id)
	if _, err := e.store.CreateAPIKey(e.ctx, store.NewAPIKey{ID: id, Name: "runai-steps-" + e.id, Role: "admin", ScopeType: "system",
		ExpiresAt: time.Now().Add(time.Hour), SecretHash: hash}, admin); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../runai/runai-steps.sh")
	cmd.Env = append(os.Environ(), "BASE_URL="+e.a.URL, "CLIENT_ID="+id.String(), "CLIENT_SECRET="+token,
		"WORKLOAD_TYPE=Standard training", "PRIORITY=low", "PROJECT="+ns, "IMAGE=busybox", "GPUS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("runai-steps.sh failed (%v):\n%s", err, out)
	}
	t.Logf("runai-steps.sh:\n%s", out)
	if !strings.Contains(string(out), "submitted training runai-steps-training-") || !strings.Contains(string(out), "all steps passed") {
		t.Errorf("runai-steps.sh did not report the submission:\n%s", out)
	}

	jobs, err := e.client.BatchV1().Jobs(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "arbiter.dev/workload-type=standard-training"})
	if err != nil || len(jobs.Items) != 1 {
		t.Fatalf("the standard trainings in %s: %v (%v), want the script's one", ns, jobs, err)
	}
	job := jobs.Items[0]
	if by := job.Annotations["arbiter.dev/submitted-by"]; by != "api-key:"+id.String() {
		t.Errorf("the training was submitted by %q, want the script's API key", by)
	}
	e.eventually("the script's training runs", time.Minute, func() bool { return e.running(ns, job.Name) == 1 })
}
