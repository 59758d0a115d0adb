package devcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindSourceAndVersion(t *testing.T) {
	src, err := FindSource()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(src) != "k8s" || filepath.Base(filepath.Dir(src)) != "hack" {
		t.Fatalf("source %s", src)
	}
	v, err := kubernetesVersion(src)
	if err != nil || !strings.HasPrefix(v, "v1.") {
		t.Fatalf("version %q, %v", v, err)
	}
	t.Setenv(EnvSource, t.TempDir())
	if _, err := FindSource(); err == nil || !strings.Contains(err.Error(), EnvSource) {
		t.Fatalf("a bad %s: %v", EnvSource, err)
	}
}

// A binary's stamp changes with its own module's pins and main, and only with those.
func TestStampFollowsPins(t *testing.T) {
	src := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module x\nrequire k8s.io/kubernetes v1.34.4\n")
	write("go.sum", "a\n")
	write("kube-apiserver/main.go", "package main\n")
	write("kube-scheduler/main.go", "package main\n")
	write("etcd/go.mod", "module y\n")
	write("etcd/main.go", "package main\n")
	byName := map[string]component{}
	for _, c := range components {
		byName[c.name] = c
	}
	stamps := func() map[string]string {
		m := map[string]string{}
		for _, n := range []string{KubeAPIServer, KubeScheduler, Etcd} {
			s, err := stamp(src, byName[n], "-X v")
			if err != nil {
				t.Fatal(err)
			}
			m[n] = s
		}
		return m
	}
	s0 := stamps()
	write("etcd/go.mod", "module y\nrequire go.etcd.io/etcd/server/v3 v3.6.6\n")
	s1 := stamps()
	if s1[Etcd] == s0[Etcd] || s1[KubeAPIServer] != s0[KubeAPIServer] {
		t.Fatalf("etcd pin change: %v -> %v", s0, s1)
	}
	write("kube-scheduler/main.go", "package main\n// changed\n")
	s2 := stamps()
	if s2[KubeScheduler] == s1[KubeScheduler] || s2[KubeAPIServer] != s1[KubeAPIServer] {
		t.Fatalf("scheduler main change: %v -> %v", s1, s2)
	}
	write("go.sum", "b\n")
	s3 := stamps()
	if s3[KubeScheduler] == s2[KubeScheduler] || s3[KubeAPIServer] == s2[KubeAPIServer] || s3[Etcd] != s2[Etcd] {
		t.Fatalf("kubernetes pin change: %v -> %v", s2, s3)
	}
}
