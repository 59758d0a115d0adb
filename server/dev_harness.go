package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"k8s.io/client-go/rest"

	"github.com/arbiterhq/arbiter/internal/dev/demo"
	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/dev/pglocal"
	"github.com/arbiterhq/arbiter/store"
)

// The development harness, reached from here only (docs/architecture.md "Floors"): what
// `make run` and a production install without a database or cluster of their own start — a
// private PostgreSQL, a local control plane, the demo's organization and workloads. Nothing
// else in server imports internal/dev, so that what ships and what only helps a newcomer stay
// apart.

// startPrivateDatabase starts a PostgreSQL of this process's own in dir.
func startPrivateDatabase(ctx context.Context, dir string, log *slog.Logger) (url string, stop func(), err error) {
	log.Info("starting a private PostgreSQL", "dir", dir)
	pg, err := pglocal.Start(ctx, pglocal.Options{Dir: dir, Log: log})
	if err != nil {
		return "", nil, err
	}
	return pg.URL("arbiter"), func() {
		if err := pg.Stop(); err != nil {
			log.Warn("private PostgreSQL did not stop cleanly", "err", err)
		}
	}, nil
}

// startLocalCluster starts a local Kubernetes control plane (and kwok's nodes) in dir, with the
// operators the demo's workloads need when withDemo.
func startLocalCluster(ctx context.Context, dir string, withDemo bool, log *slog.Logger, out io.Writer) (cluster, error) {
	log.Info("starting a local Kubernetes control plane", "dir", dir)
	opts := devcluster.Options{Dir: dir, Nodes: devcluster.DefaultNodes, Progress: out}
	if withDemo {
		opts.Operators = demo.Operators
	}
	cl, err := devcluster.Start(ctx, opts)
	if err != nil {
		return cluster{}, err
	}
	fmt.Fprintf(out, "  Local control plane ready; point kubectl at it with:\n    export KUBECONFIG=%s\n", cl.Kubeconfig())
	return cluster{config: cl.RESTConfig(), failed: cl.Failed(), stop: func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cl.Stop(stopCtx); err != nil {
			log.Warn("local control plane did not stop cleanly", "err", err)
		}
	}}, nil
}

// seedDemo gives the database the demo's organization (docs/demo.md).
func seedDemo(ctx context.Context, st *store.Store, log *slog.Logger) { demo.Seed(ctx, st, log) }

// startDemo submits the demo's workloads to the cluster until ctx ends; the returned function
// waits for it to stop.
func startDemo(ctx context.Context, cfg *rest.Config, schedulerName string, seed uint64, log *slog.Logger) func() {
	return demo.Start(ctx, cfg, schedulerName, seed, log)
}
