package server

import (
	"io"
	"strings"
	"testing"
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
