package conformance

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/servetest"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/server"
)

// The workload routes submit to Kubernetes: one local control plane, started on first use,
// serves the package (one small pool of fake GPU nodes), and TestMain stops it.
var cluster struct {
	once sync.Once
	c    *devcluster.Cluster
	dir  string
	err  error
}

// clusterPool is the devcluster pool of fake GPU nodes the workload checks schedule on.
var clusterPool = devcluster.Pool{Name: "conformance", Nodes: 1, GPUs: 4}

func sharedCluster(t *testing.T) *devcluster.Cluster {
	t.Helper()
	cluster.once.Do(func() {
		if cluster.dir, cluster.err = os.MkdirTemp("", "arbiter-conformance-cluster-"); cluster.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cluster.c, cluster.err = devcluster.Start(ctx, devcluster.Options{Dir: cluster.dir,
			Nodes: clusterPool.Name + "=1x4", Timeout: 4 * time.Minute})
	})
	if cluster.err != nil {
		t.Fatalf("local control plane: %v", cluster.err)
	}
	return cluster.c
}

func stopSharedCluster() {
	if cluster.c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = cluster.c.Stop(ctx)
	}
	if cluster.dir != "" {
		os.RemoveAll(cluster.dir)
	}
}

// serveOnCluster runs server.Serve over a fresh database on the shared control plane and signs
// the admin in.
func serveOnCluster(t *testing.T) *client {
	t.Helper()
	kc := sharedCluster(t).Kubeconfig()
	cfg, err := server.ParseConfig("serve", []string{"--database-url", testdb.NewURL(t)}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.DataDir, cfg.Kubeconfig, cfg.AdminPassword = "127.0.0.1:0", t.TempDir(), kc, adminPassword
	c := &client{base: servetest.Serve(t, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))), doc: loadExtract(t)}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	c.form(t, "/api/v2/token", url.Values{"grant_type": {"password"}, "username": {"admin"}, "password": {adminPassword}}, 200, &tok)
	c.token = tok.AccessToken
	return c
}
