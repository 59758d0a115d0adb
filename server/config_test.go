package server

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestTrustedProxiesConfig: --trusted-proxies and its twin ARBITER_TRUSTED_PROXIES take CIDRs
// or addresses, default to none, and a value that is neither stops the start with a sentence.
func TestTrustedProxiesConfig(t *testing.T) {
	c, err := ParseConfig("serve", nil, io.Discard)
	if err != nil || c.TrustedProxies != "" {
		t.Fatalf("default: %q, %v; want none", c.TrustedProxies, err)
	}
	c, err = ParseConfig("serve", []string{"--trusted-proxies=10.0.0.0/8, 192.168.0.1"}, io.Discard)
	if err != nil || c.TrustedProxies != "10.0.0.0/8, 192.168.0.1" {
		t.Fatalf("flag: %q, %v", c.TrustedProxies, err)
	}
	t.Setenv("ARBITER_TRUSTED_PROXIES", "fd00::/8")
	if c, err = ParseConfig("serve", nil, io.Discard); err != nil || c.TrustedProxies != "fd00::/8" {
		t.Fatalf("environment: %q, %v", c.TrustedProxies, err)
	}
	t.Setenv("ARBITER_TRUSTED_PROXIES", "the load balancer")
	if _, err = ParseConfig("serve", nil, io.Discard); err == nil || !strings.Contains(err.Error(), "--trusted-proxies") || !strings.Contains(err.Error(), "CIDR") {
		t.Fatalf("a bad value: %v", err)
	}
}

// TestNamespaceRulesConfig: --reserved-namespaces (the Kubernetes system namespaces by
// default) and --max-project-namespaces (20) with their ARBITER_* twins become the store's
// namespace rules, Arbiter's own namespace reserved besides; bad values stop the start.
func TestNamespaceRulesConfig(t *testing.T) {
	c, err := ParseConfig("serve", []string{"--leader-election-namespace=arbiter-system"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Outside a pod, Arbiter's own namespace is the Lease's.
	inPod := InCluster()
	r := c.NamespaceRules()
	if strings.Join(r.Reserved, ",") != "kube-system,kube-public,kube-node-lease,default" || r.MaxPerProject != 20 || (!inPod && r.Own != "arbiter-system") {
		t.Fatalf("default rules %+v", r)
	}
	t.Setenv("ARBITER_RESERVED_NAMESPACES", "kube-system, shared")
	t.Setenv("ARBITER_MAX_PROJECT_NAMESPACES", "5")
	if c, err = ParseConfig("serve", nil, io.Discard); err != nil {
		t.Fatal(err)
	}
	if r = c.NamespaceRules(); strings.Join(r.Reserved, ",") != "kube-system,shared" || r.MaxPerProject != 5 || (!inPod && r.Own != "default") {
		t.Fatalf("rules from the environment %+v", r)
	}
	for _, args := range [][]string{{"--max-project-namespaces=0"}, {"--reserved-namespaces=Kube_System"}} {
		if _, err := ParseConfig("serve", args, io.Discard); err == nil || !strings.Contains(err.Error(), strings.SplitN(args[0], "=", 2)[0]) {
			t.Errorf("%v: %v, want a refusal naming the flag", args, err)
		}
	}
}

// TestDryRunLimitsConfig: --dry-runs-per-replica (8) and --dry-runs-per-caller (2) with their
// ARBITER_* twins bound the replica's dry runs; a Config built in code without them has the
// defaults; a bound under 1 stops the start with a sentence naming the flag.
func TestDryRunLimitsConfig(t *testing.T) {
	c, err := ParseConfig("serve", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if replica, caller := c.dryRunLimits().Bounds(); replica != 8 || caller != 2 {
		t.Errorf("default bounds %d, %d; want 8, 2", replica, caller)
	}
	if replica, caller := (Config{}).dryRunLimits().Bounds(); replica != 8 || caller != 2 {
		t.Errorf("a Config built in code: bounds %d, %d; want 8, 2", replica, caller)
	}
	t.Setenv("ARBITER_DRY_RUNS_PER_REPLICA", "16")
	if c, err = ParseConfig("serve", []string{"--dry-runs-per-caller=3"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if replica, caller := c.dryRunLimits().Bounds(); replica != 16 || caller != 3 {
		t.Errorf("configured bounds %d, %d; want 16, 3", replica, caller)
	}
	for _, args := range [][]string{{"--dry-runs-per-replica=0"}, {"--dry-runs-per-caller=-1"}} {
		if _, err := ParseConfig("serve", args, io.Discard); err == nil || !strings.Contains(err.Error(), strings.SplitN(args[0], "=", 2)[0]) {
			t.Errorf("%v: %v, want a refusal naming the flag", args, err)
		}
	}
}

// TestAuditRetentionConfig: --audit-retention-days (400 by default) and its ARBITER_* twin set
// how long the audit log keeps a row; less than a day stops the start, naming the flag.
func TestAuditRetentionConfig(t *testing.T) {
	c, err := ParseConfig("serve", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.AuditRetention(); got != 400*24*time.Hour {
		t.Errorf("default retention %v, want 400 days", got)
	}
	if got := (Config{}).AuditRetention(); got != 400*24*time.Hour {
		t.Errorf("a Config built in code: retention %v, want the default 400 days", got)
	}
	t.Setenv("ARBITER_AUDIT_RETENTION_DAYS", "90")
	if c, err = ParseConfig("serve", nil, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := c.AuditRetention(); got != 90*24*time.Hour {
		t.Errorf("retention from the environment %v, want 90 days", got)
	}
	if _, err := ParseConfig("serve", []string{"--audit-retention-days=0"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--audit-retention-days") {
		t.Errorf("--audit-retention-days=0: %v, want a refusal naming the flag", err)
	}
}

// TestClusterIDConfig: --cluster-id is optional and must be a UUID, as Run:ai's cluster ids are.
func TestClusterIDConfig(t *testing.T) {
	c, err := ParseConfig("serve", []string{"--cluster-id", "d73a738f-fab3-430a-8fa3-5241493d7128"}, io.Discard)
	if err != nil || c.ClusterID != "d73a738f-fab3-430a-8fa3-5241493d7128" {
		t.Errorf("--cluster-id of a UUID: %q, %v", c.ClusterID, err)
	}
	if _, err := ParseConfig("serve", []string{"--cluster-id", "prod-east"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--cluster-id") {
		t.Errorf("--cluster-id prod-east: %v, want a refusal naming the flag", err)
	}
}
