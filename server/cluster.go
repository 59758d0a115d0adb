package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/arbiterhq/arbiter/internal/devcluster"
	"github.com/arbiterhq/arbiter/internal/metrics"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
)

// NoCluster is the --kubeconfig value that runs the console and API without any cluster.
const NoCluster = "none"

// cluster is the Kubernetes cluster Arbiter schedules.
type cluster struct {
	config *rest.Config // nil with --kubeconfig=none
	stop   func()
	// failed reports a component of a local control plane that died (nil otherwise: a
	// remote cluster's outages are retried by client-go).
	failed <-chan error
}

// connectCluster finds the cluster to schedule: --kubeconfig (or $KUBECONFIG), else the
// in-cluster configuration, else a local control plane started in the data dir.
func connectCluster(ctx context.Context, c Config, log *slog.Logger, out io.Writer) (cluster, error) {
	nothing := func() {}
	switch {
	case c.Kubeconfig == NoCluster:
		return cluster{stop: nothing}, nil
	case c.Kubeconfig != "":
		cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		if err != nil {
			return cluster{}, fmt.Errorf("kubeconfig %s: %w", c.Kubeconfig, err)
		}
		return cluster{config: cfg, stop: nothing}, nil
	case InCluster():
		cfg, err := rest.InClusterConfig()
		return cluster{config: cfg, stop: nothing}, err
	}
	dir := filepath.Join(c.DataDir, "devcluster")
	log.Info("starting a local Kubernetes control plane", "dir", dir)
	cl, err := devcluster.Start(ctx, devcluster.Options{Dir: dir, Nodes: devcluster.DefaultNodes, Progress: out})
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

// startScheduler runs the scheduler against cfg until ctx ends; configuration changes made in
// this process or announced by other replicas reload its settings.
// The returned channel is closed when the scheduler stops; *runErr then holds why.
func startScheduler(ctx context.Context, c Config, cfg *rest.Config, st *store.Store, log *slog.Logger, m *metrics.Registry, onCycle func(*kube.Result), runErr *error) (*kube.Scheduler, <-chan struct{}, error) {
	records, err := newRecorder(ctx, st, log)
	if err != nil {
		return nil, nil, fmt.Errorf("workload records: %w", err)
	}
	sched, err := kube.New(kube.Options{
		SchedulerName: c.SchedulerName,
		Config:        cfg,
		LoadSettings: func(ctx context.Context) (*kube.Settings, error) {
			s, err := loadSettings(ctx, st)
			m.ConfigLoaded(err)
			return s, err
		},
		OnCycle: func(r *kube.Result) {
			// Without leader election the loop runs whenever the process does: a cycle means
			// this replica leads. Leader election sets the gauge itself as the lease comes and goes.
			if !c.LeaderElect {
				m.SetLeader(true)
			}
			m.Cycle(r.Decide, r.Apply, r.Plan)
			records.observe(r)
			if onCycle != nil {
				onCycle(r)
			}
		},
		Log:      log,
		Observer: m,
	})
	if err != nil {
		return nil, nil, err
	}
	records.outcome = sched.OwnerOutcome
	go records.run(ctx)
	st.OnConfigChange(func(string) { sched.Reload() })
	done := make(chan struct{})
	go func() {
		*runErr = sched.Run(ctx)
		m.SetLeader(false)
		// The last cycle's records, written before the database pool closes.
		flushCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		records.flush(flushCtx)
		cancel()
		close(done)
	}()
	return sched, done, nil
}
