package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/cli"
	"github.com/arbiterhq/arbiter/store"
)

// researcher runs the built arbiter binary as a researcher in a terminal would (without one:
// stdin is not a terminal, so nothing prompts), with a config file of its own, and keeps the
// transcript of what was typed and printed.
type researcher struct {
	t          *testing.T
	bin        string
	env        []string
	transcript *bytes.Buffer
}

type ran struct {
	stdout, stderr string
	code           int
}

func (r *researcher) run(args ...string) ran {
	r.t.Helper()
	res := r.peek(args...)
	fmt.Fprintf(r.transcript, "$ arbiter %s\n%s%s", strings.Join(args, " "), res.stdout, res.stderr)
	if res.code != 0 {
		fmt.Fprintf(r.transcript, "[exit %d]\n", res.code)
	}
	r.transcript.WriteString("\n")
	return res
}

// peek runs args without adding them to the transcript (a wait that asks again and again).
func (r *researcher) peek(args ...string) ran {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, args...)
	cmd.Env = r.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatalf("arbiter %v: %v", args, err)
	}
	return ran{out.String(), errOut.String(), code}
}

// must runs args and fails the test unless it exits 0.
func (r *researcher) must(args ...string) string {
	r.t.Helper()
	res := r.run(args...)
	if res.code != 0 {
		r.t.Fatalf("arbiter %v: exit %d\n%s%s", args, res.code, res.stdout, res.stderr)
	}
	return res.stdout
}

// TestCLI_ResearchersDay: a researcher signs in with an access key and lives in the terminal:
// a dry run names the workload its submission would preempt, and exactly that one is evicted
// when it is submitted; describe says why a workload waits, where it stands and when it should
// start, and after a preemption who preempted it and under which rule; set changes the
// priority label of the Job, and a priority beyond the project's range is refused with the
// policy's sentence (exit 1); stop, run and delete act on the Job. The binary is the one built
// from this tree, run against arbiter serve on the local control plane.
func TestCLI_ResearchersDay(t *testing.T) {
	t.Parallel()
	bin := arbiterBinary(t) // built from this tree
	e := newEnv(t, 1, 2)
	ns := e.project("day", 2, store.PolicyUpdate{MaxPriority: opt("high")})
	proj, err := e.store.ProjectNamed(e.ctx, "day-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	key, submitter := e.apiKey("researcher", proj.ID)
	keyID := strings.TrimPrefix(submitter, "api-key:")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ARBITER_") {
			env = append(env, kv)
		}
	}
	r := &researcher{t: t, bin: bin, transcript: &bytes.Buffer{}, env: append(env,
		"ARBITER_CONFIG="+filepath.Join(t.TempDir(), "config.yaml"), "ARBITER_CLIENT_SECRET="+key, "NO_COLOR=1")}
	t.Cleanup(func() {
		t.Logf("the researcher's day:\n%s", r.transcript)
		_ = os.WriteFile(filepath.Join(artifactDir(t), "cli-transcript.txt"), r.transcript.Bytes(), 0o644)
	})
	project := proj.Name
	job := func(name string) map[string]string {
		j, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return map[string]string{"priority": j.Labels["priorityClassName"], "suspended": fmt.Sprint(j.Spec.Suspend != nil && *j.Spec.Suspend)}
	}

	r.must("login", e.a.URL, "--client-id", keyID, "-p", project)
	r.must("submit", "training", "victim", "-i", "example.invalid/run:1", "-g", "2", "--cpu-core-request", "0.1",
		"--priority", "low", "--preemptibility", "preemptible", "--", "sleep", "infinity")
	e.eventually("victim runs on both GPUs", time.Minute, func() bool { return e.running(ns, "victim") == 1 })
	r.must("submit", "training", "waiter", "-i", "example.invalid/run:1", "-g", "2", "--cpu-core-request", "0.1",
		"--priority", "low", "--", "sleep", "infinity")

	// Pending: why, where in the queue, and when it should start.
	var pending string
	e.eventually("describe says why waiter waits, its place and its estimate", time.Minute, func() bool {
		pending = r.peek("describe", "waiter").stdout
		return strings.Contains(pending, "Reason:") && strings.Contains(pending, "Queue position:") &&
			strings.Contains(pending, "Estimate basis:") && !strings.Contains(pending, "No estimate yet")
	})
	pending = r.must("describe", "waiter")
	// where its priority came from: the label the submission wrote, not a guess
	for _, want := range []string{"Phase:            Pending", "Priority:         low (", "): asked for with the label priorityClassName on the ",
		"Reason:           InsufficientCapacity", "Queue position:   1", "Next step:"} {
		if !strings.Contains(pending, want) {
			t.Errorf("describe waiter while pending lacks %q:\n%s", want, pending)
		}
	}

	// The dry run's victims, then the real submission: exactly those are evicted.
	r.must("submit", "training", "urgent", "-i", "example.invalid/run:1", "-g", "2", "--cpu-core-request", "0.1", "--priority", "high", "--dry-run")
	var dry struct {
		Outcome string `json:"outcome"`
		Victims []struct {
			WorkloadID, Name string
		} `json:"victims"`
	}
	if err := json.Unmarshal([]byte(r.must("submit", "training", "urgent", "-i", "example.invalid/run:1", "-g", "2",
		"--cpu-core-request", "0.1", "--priority", "high", "--dry-run", "-o", "json")), &dry); err != nil {
		t.Fatal(err)
	}
	var victimNames []string
	for _, v := range dry.Victims {
		victimNames = append(victimNames, v.Name)
	}
	if dry.Outcome != "start-after-preemption" || !slices.Equal(victimNames, []string{"victim"}) {
		t.Fatalf("the dry run foresees %s with victims %v; want start-after-preemption of victim", dry.Outcome, victimNames)
	}
	r.must("submit", "training", "urgent", "-i", "example.invalid/run:1", "-g", "2", "--cpu-core-request", "0.1",
		"--priority", "high", "--", "sleep", "infinity")
	e.eventually("urgent runs", time.Minute, func() bool { return e.running(ns, "urgent") == 1 })
	e.eventually("the dry run's victim is preempted", 30*time.Second, func() bool {
		return slices.Contains(e.history(dry.Victims[0].WorkloadID), "Preempted")
	})
	var waiter struct {
		Workload struct{ ID string } `json:"workload"`
	}
	if err := json.Unmarshal([]byte(r.must("describe", "waiter", "-o", "json")), &waiter); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(e.history(waiter.Workload.ID), "Preempted") {
		t.Errorf("waiter, which the dry run did not name, was preempted too")
	}
	after := r.must("describe", "victim")
	if !strings.Contains(after, "Preempted at ") || !strings.Contains(after, " by "+ns+"/urgent (") || !strings.Contains(after, "under S16") {
		t.Errorf("describe victim after its preemption does not say who preempted it and why:\n%s", after)
	}
	r.must("list")

	// set: the Job's label changes; beyond the project's range, the policy's sentence and exit 1.
	r.must("set", "waiter", "--priority", "medium")
	e.eventually("waiter's Job is labelled medium", 30*time.Second, func() bool { return job("waiter")["priority"] == "medium" })
	refused := r.run("set", "waiter", "--priority", "very-high")
	if refused.code != cli.ExitRefused || !strings.Contains(refused.stderr, "maxPriority high") {
		t.Errorf("a priority above the range: exit %d, stderr %q; want 1 with the policy's sentence", refused.code, refused.stderr)
	}
	if job("waiter")["priority"] != "medium" {
		t.Errorf("the refused change relabelled the Job: %v", job("waiter"))
	}

	r.must("stop", "waiter")
	e.eventually("waiter's Job is suspended", 30*time.Second, func() bool { return job("waiter")["suspended"] == "true" })
	r.must("run", "waiter")
	e.eventually("waiter's Job is resumed", 30*time.Second, func() bool { return job("waiter")["suspended"] == "false" })
	r.must("delete", "urgent")
	e.eventually("urgent's Job is gone", time.Minute, func() bool { return job("urgent") == nil })
	if res := r.run("describe", "no-such-workload"); res.code != cli.ExitNotFound {
		t.Errorf("describe of a name no workload has: exit %d, want %d", res.code, cli.ExitNotFound)
	}
	r.must("logout")
	if res := r.run("list"); res.code != cli.ExitSignedOut {
		t.Errorf("list after logout: exit %d, want %d (not signed in)", res.code, cli.ExitSignedOut)
	}
}
