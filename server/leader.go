package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// The lease timings client-go's components use by default (kube-scheduler's too).
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// leaseNamespace is --leader-election-namespace, else the pod's own namespace in a cluster,
// else "default" (docs/operations.md "High availability").
func leaseNamespace(c Config) string {
	if c.LeaderElectionNamespace != "" {
		return c.LeaderElectionNamespace
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b))
	}
	return "default"
}

// ownNamespace is the namespace Arbiter runs in: the pod's own in a cluster, else the
// Lease's (--leader-election-namespace, else "default").
func ownNamespace(c Config) string {
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b))
	}
	return leaseNamespace(c)
}

// leaseName is --leader-election-id, else one lease per scheduler name, so that two Arbiters
// with different scheduler names in one namespace never wait for each other.
func leaseName(c Config) string {
	if c.LeaderElectionID != "" {
		return c.LeaderElectionID
	}
	return "arbiter-" + c.SchedulerName
}

// leadership is this replica's part in leader election on a Lease (client-go leaderelection).
// client-go's elector stops leading once it has failed to renew for the renew deadline, but
// a process that was frozen (SIGSTOP, a long GC pause, a suspended VM) wakes with goroutines
// that do not know yet; so Acting also asks whether the last successful renewal is younger
// than the renew deadline. Another replica may only take the lease a whole lease duration
// after it last saw it renewed, which leaves lease duration − renew deadline for a call that
// passed the check to finish.
type leadership struct {
	identity      string
	lock          *renewalClock
	renewDeadline time.Duration
	cfg           leaderelection.LeaderElectionConfig
	log           *slog.Logger

	elector atomic.Pointer[leaderelection.LeaderElector]
	ready   atomic.Bool // leading, and the term is set up (see startTerm)
}

func newLeadership(c Config, cfg *rest.Config, log *slog.Logger) (*leadership, error) {
	client, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, err
	}
	identity := c.LeaderElectionIdentity
	if identity == "" {
		host, _ := os.Hostname()
		identity = host + "_" + uuid.NewString()[:8]
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, leaseNamespace(c), leaseName(c),
		client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return nil, err
	}
	or := func(d, def time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return def
	}
	l := &leadership{identity: identity, lock: &renewalClock{Interface: lock, base: time.Now()}, log: log,
		renewDeadline: or(c.LeaseRenewDeadline, DefaultRenewDeadline)}
	l.cfg = leaderelection.LeaderElectionConfig{
		Lock:            l.lock,
		LeaseDuration:   or(c.LeaseDuration, DefaultLeaseDuration),
		RenewDeadline:   l.renewDeadline,
		RetryPeriod:     or(c.LeaseRetryPeriod, DefaultRetryPeriod),
		ReleaseOnCancel: true,
		Name:            leaseName(c),
	}
	if l.cfg.RenewDeadline >= l.cfg.LeaseDuration {
		return nil, fmt.Errorf("--leader-elect-renew-deadline (%s) must be shorter than --leader-elect-lease-duration (%s)", l.cfg.RenewDeadline, l.cfg.LeaseDuration)
	}
	return l, nil
}

// run takes part in elections until ctx ends: each term, started runs (on its own goroutine,
// with a context that ends with the term) and stopped runs when the term ends. A replica
// that lost the lease stands again. When ctx ends, a held lease is released, so a successor
// need not wait for it to expire.
func (l *leadership) run(ctx context.Context, started func(term context.Context), stopped func()) {
	cfg := l.cfg
	cfg.Callbacks = leaderelection.LeaderCallbacks{
		OnStartedLeading: func(term context.Context) {
			l.log.Info("leading: this replica schedules now", "identity", l.identity, "lease", cfg.Name)
			started(term)
		},
		OnStoppedLeading: func() {
			if l.ready.Swap(false) || l.lock.renewed() {
				l.log.Warn("no longer leading: this replica stopped scheduling", "identity", l.identity)
			}
			l.lock.forget()
			stopped()
		},
		OnNewLeader: func(id string) {
			if id != l.identity {
				l.log.Info("another replica leads", "leader", id)
			}
		},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(cfg)
		if err != nil {
			l.log.Error("leader election not started", "err", err)
			return
		}
		l.elector.Store(le)
		le.Run(ctx)
	}
}

// Standby reports whether another replica holds the lease, as this one last saw it. Nil (no
// leader election): never.
func (l *leadership) Standby() bool {
	if l == nil {
		return false
	}
	le := l.elector.Load()
	if le == nil {
		return false // not started: none seen yet
	}
	leader := le.GetLeader()
	return leader != "" && leader != l.identity
}

// Acting reports whether this replica may act on the cluster now: it leads, its term is set
// up, and it renewed the lease within the renew deadline. Nil (no leader election): always.
func (l *leadership) Acting() bool {
	if l == nil {
		return true
	}
	return l.ready.Load() && l.fresh()
}

// fresh reports whether this replica renewed the lease within the renew deadline: whether a
// term that is not set up yet (takeOver) may write.
func (l *leadership) fresh() bool { return l.lock.since() < l.renewDeadline }

// Leader names the replica that holds the lease as last seen, and this replica's identity.
func (l *leadership) Leader() (leader, self string) {
	if l == nil {
		return "", ""
	}
	if le := l.elector.Load(); le != nil {
		leader = le.GetLeader()
	}
	return leader, l.identity
}

// renewalClock is the Lease lock that remembers when this replica last wrote itself into
// the lease: the time taken just before a successful Create or Update, on the monotonic
// clock, so a wall-clock jump cannot make an old renewal look fresh.
//
// It also keeps a release to the lease this replica holds. client-go releases (ReleaseOnCancel)
// by reading the lease, for its resource version, and writing an empty holder whenever its
// own last observed record names this replica; after a renewal that failed without reading
// the lease (a replica frozen past its lease wakes to an expired renew deadline) that record
// is stale, and the write would empty the lease another replica took meanwhile, letting this
// one take it back while the other still acts. So an empty holder is written only when the
// lease as just read names this replica.
type renewalClock struct {
	resourcelock.Interface
	base   time.Time
	at     atomic.Int64           // time.Since(base) of the last renewal, +1; 0: none
	holder atomic.Pointer[string] // the holder as the last Get read it
}

func (r *renewalClock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := r.Interface.Get(ctx)
	if err == nil {
		holder := rec.HolderIdentity
		r.holder.Store(&holder)
	}
	return rec, raw, err
}

func (r *renewalClock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return r.note(ler, func() error { return r.Interface.Create(ctx, ler) })
}

func (r *renewalClock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	if ler.HolderIdentity == "" { // a release
		if holder := r.holder.Load(); holder == nil || *holder != r.Identity() {
			return fmt.Errorf("lease %s is not this replica's to release", r.Describe())
		}
	}
	return r.note(ler, func() error { return r.Interface.Update(ctx, ler) })
}

func (r *renewalClock) note(ler resourcelock.LeaderElectionRecord, write func() error) error {
	before := time.Since(r.base)
	err := write()
	switch {
	case err != nil:
	case ler.HolderIdentity == r.Identity():
		r.at.Store(int64(before) + 1)
	default: // released
		r.forget()
	}
	return err
}

func (r *renewalClock) forget()       { r.at.Store(0) }
func (r *renewalClock) renewed() bool { return r.at.Load() != 0 }

// since is how long ago the lease was last renewed (very long if never).
func (r *renewalClock) since() time.Duration {
	at := r.at.Load()
	if at == 0 {
		return time.Duration(1<<63 - 1)
	}
	return time.Since(r.base) - time.Duration(at-1)
}
