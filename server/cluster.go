package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/arbiterhq/arbiter/internal/metrics"
	"github.com/arbiterhq/arbiter/scheduler"
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
	return startLocalCluster(ctx, filepath.Join(c.DataDir, "devcluster"), c.Demo, log, out)
}

// schedulerRun is the scheduler and what decides when it may act.
type schedulerRun struct {
	sched  *kube.Scheduler
	lead   *leadership // nil without --leader-elect
	health *clusterHealth
	done   <-chan struct{} // closed when the scheduler has stopped; *runErr then holds why
	// estimates are the start estimates of waiting workloads (estimates.go)
	estimates *estimator
	// tookOver: without --leader-elect, this process has reconciled what it finds in the
	// cluster (takeOver) and may act; with it, the lease's term says so (leadership.ready).
	tookOver atomic.Bool
}

// startScheduler runs the scheduler against cfg (with listing's client and informers, which
// may be listing already; nil: its own) until ctx ends; configuration changes made in
// this process or announced by other replicas reload its settings. With --leader-elect the
// informers run on every replica, but only the leader's cycles act and write workload records;
// each term starts from the records in the database (the previous leader's). whileLeading runs
// on a goroutine of its own for each term, with the term's context (without leader election:
// once, with ctx).
func startScheduler(ctx context.Context, c Config, cfg *rest.Config, listing *kube.Listing, st *store.Store, log *slog.Logger, m *metrics.Registry, onCycle func(*kube.Result), whileLeading func(context.Context), runErr *error) (*schedulerRun, error) {
	run := &schedulerRun{}
	var err error
	if run.health, err = newClusterHealth(cfg, log); err != nil {
		return nil, err
	}
	identity := ""
	if c.LeaderElect {
		if run.lead, err = newLeadership(c, cfg, log); err != nil {
			return nil, fmt.Errorf("leader election: %w", err)
		}
		identity = run.lead.identity
	}
	var records atomic.Pointer[recorder]
	sched, err := kube.New(kube.Options{
		SchedulerName: c.SchedulerName,
		Config:        cfg,
		Listing:       listing,
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
			if rec := records.Load(); rec != nil {
				rec.observe(r)
			}
			if onCycle != nil {
				onCycle(r)
			}
		},
		Acting: func() bool {
			return run.health.Reachable() && run.lead.Acting() && (run.lead != nil || run.tookOver.Load())
		},
		Identity: identity,
		Log:      log,
		Observer: m,
	})
	if err != nil {
		return nil, err
	}
	run.sched = sched
	// Each term also records the usage history (usage_recorder.go), beside whileLeading.
	leading := func(term context.Context) {
		go recordUsage(term, c, st, sched, run.lead.Acting, log)
		whileLeading(term)
	}
	startRecorder := func(ctx context.Context) (*recorder, error) {
		rec, err := newRecorder(ctx, st, log)
		if err != nil {
			return nil, err
		}
		rec.interval = c.RecordInterval
		rec.outcome = sched.Workloads().OwnerOutcome
		rec.ended = sched.Workloads().OwnerEnded
		rec.ownerStopped = sched.Workloads().OwnerStopped
		if run.lead != nil {
			rec.acting = run.lead.Acting
		}
		go rec.run(ctx)
		return rec, nil
	}
	if run.lead == nil {
		// A process that acts without an election is its own successor: one killed before it
		// recorded what it did left the same gaps a dead leader leaves. Like a leader's term it
		// reads the records before its first cycle, but while the informers list the cluster:
		// read before they started, they delayed a start's first bind.
		go func() {
			rec := recorderForTerm(ctx, startRecorder, log)
			if rec == nil {
				return // the process ends
			}
			records.Store(rec)
			taken := beforeFirstCycle(ctx, sched, st, func() bool { return true }, c.UsageInterval, log)
			run.tookOver.Store(true)
			sched.StartedLeading()
			recordFinishedAfterFirstCycle(ctx, rec.firstWritten, sched.FinishedWorkloads, taken, st, func() bool { return true }, log)
		}()
		go leading(ctx)
	}
	go run.health.run(ctx)
	run.estimates = &estimator{last: sched.Last, medians: st.MedianRuntimes, log: log,
		share: func(est map[string]scheduler.Estimate) {
			if rec := records.Load(); rec != nil {
				rec.shareEstimates(est)
			}
		}}
	go run.estimates.run(ctx)
	st.OnConfigChange(func(string) { sched.Reload() })

	// The election outlives ctx a little: the leader flushes its last records, then releases
	// the lease.
	electCtx, stopElection := context.WithCancel(context.WithoutCancel(ctx))
	elected := make(chan struct{})
	if run.lead != nil {
		go func() {
			defer close(elected)
			run.lead.run(electCtx, func(term context.Context) {
				rec := recorderForTerm(term, startRecorder, log)
				if rec == nil {
					return
				}
				// Before the term's first cycle: none of its binds can race the reconciliation.
				taken := beforeFirstCycle(term, sched, st, run.lead.fresh, c.UsageInterval, log)
				records.Store(rec)
				go leading(term)
				run.lead.ready.Store(true)
				m.SetLeader(true)
				sched.StartedLeading()
				go recordFinishedAfterFirstCycle(term, rec.firstWritten, sched.FinishedWorkloads, taken, st, run.lead.fresh, log)
			}, func() {
				m.SetLeader(false)
				records.Store(nil)
			})
		}()
	} else {
		close(elected)
	}
	done := make(chan struct{})
	run.done = done
	go func() {
		*runErr = sched.Run(ctx)
		m.SetLeader(false)
		// The last cycle's records, written before the database pool closes.
		if rec := records.Load(); rec != nil {
			flushCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			rec.flush(flushCtx)
			cancel()
		}
		stopElection()
		<-elected
		close(done)
	}()
	return run, nil
}

// beforeFirstCycle does what a term must have done before its first cycle, at once:
// takeOver, which waits for the cache's first lists, and seedUsage and the read of the
// waiting times, which read only the database and so need not wait for them (one after the
// other, the seeding's reads delayed a start's first bind by a third of a second on a loaded
// machine); the waiting times are seeded once the lists are in.
//
// It returns the finished workloads the takeover read (takeOver).
func beforeFirstCycle(term context.Context, sched *kube.Scheduler, st *store.Store, may func() bool, usageInterval time.Duration, log *slog.Logger) map[string]bool {
	seeded := make(chan struct{})
	go func() {
		defer close(seeded)
		seedUsage(term, st, sched, usageInterval, log)
	}()
	waiting := readWaiting(term, st)
	taken := takeOver(term, sched, st, may, log) // waits for the informers' first lists
	seedWaiting(term, st, waiting, sched, log)   // seeds the waiting workloads those lists gave
	<-seeded
	return taken
}

// recorderForTerm starts a term's recorder from the database's records, trying again while
// the database does not answer; nil if the term ends first.
func recorderForTerm(term context.Context, start func(context.Context) (*recorder, error), log *slog.Logger) *recorder {
	for wait := time.Second; ; wait = min(2*wait, 15*time.Second) {
		rec, err := start(term)
		if err == nil {
			return rec
		}
		if term.Err() != nil {
			return nil
		}
		log.Warn("leading, but the workload records cannot be read yet; not scheduling until they can", "err", err, "retry", wait)
		select {
		case <-term.Done():
			return nil
		case <-time.After(wait):
		}
	}
}
