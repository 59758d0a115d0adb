package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/arbiterhq/arbiter/scheduler"
)

// Options configure a Scheduler.
type Options struct {
	// SchedulerName is the spec.schedulerName of Arbiter's pods (S3).
	SchedulerName string
	Config        *rest.Config
	// LoadSettings reads the configuration part of the snapshot; it is called at start and
	// after Reload. When it fails the scheduler keeps its last good settings.
	LoadSettings func(ctx context.Context) (*Settings, error)
	// OnCycle, if set, receives every cycle's result (after the plan has been applied). It
	// runs on the scheduling goroutine: keep it quick and hand slow work off.
	OnCycle func(*Result)
	// Workers bounds concurrent API calls when applying a plan; default 128. The calls mostly
	// wait on the API server: with 32, binds queued up to half a second behind each other
	// while 4,000 pods arrived in a minute.
	Workers int
	// Interval is the longest time between cycles; default 1 s.
	Interval time.Duration
	Log      *slog.Logger
	// Observer, if set, hears of each bind and eviction carried out (Arbiter's metrics).
	Observer Observer
	// Acting, if set, says whether this replica may act on the cluster now: with leader
	// election, only while it holds a fresh lease (server/leader.go). While it says no the
	// informers stay warm but no cycle runs, and every bind, eviction, suspension, pending
	// reason, event and PriorityClass write asks it again just before the call, so a replica
	// that wakes from a freeze past its lease writes nothing. Nil: always.
	Acting func() bool
	// Identity names this replica in the events it writes (reportingInstance); default
	// <scheduler name>-<hostname>.
	Identity string
	// Listing, if set, is the client and informers to use, perhaps listing already
	// (listing.go); nil: New makes them from Config and Run starts them.
	Listing *Listing
}

// Observer hears what the scheduler did in the cluster, as it is done. Its methods run on the
// scheduling goroutine or the API workers: they must be quick and safe for concurrent use.
type Observer interface {
	// Bound: a pod created at created was bound at at.
	Bound(created, at time.Time)
	// Evicted: a workload was evicted under rule, suspended or with its pods deleted.
	Evicted(rule scheduler.Rule, suspended bool)
}

// noObserver is the Observer when none is set.
type noObserver struct{}

func (noObserver) Bound(time.Time, time.Time)   {}
func (noObserver) Evicted(scheduler.Rule, bool) {}

// Result is one cycle: what was decided from what, and how long deciding took.
type Result struct {
	At     time.Time
	Decide time.Duration // settle + snapshot + Plan()
	Apply  time.Duration
	// View is what was decided from: the snapshot (r.Snapshot), r.Workload(uid), r.Rebuilt().
	*View
	Plan *scheduler.Plan
}

// Scheduler connects the decision core to a cluster.
type Scheduler struct {
	opts     Options
	log      *slog.Logger
	client   kubernetes.Interface
	dynamic  dynamic.Interface
	metadata metadata.Interface
	cache    *Cache
	events   *eventWriter
	workers  int

	settings     atomic.Pointer[Settings]
	reload       chan struct{}
	reloads      reloads // settings_reload.go
	last         atomic.Pointer[Result]
	lastReason   map[string]string
	warned       map[string]bool
	tasks        chan func(context.Context)
	priorityCls  *priorityClassSync
	ownersMu     sync.Mutex
	ownerWatched map[schema.GroupVersionResource]bool
	served       servedKinds // whether submissions may be made as PyTorchJobs (submit_pytorchjob.go)
	// leading wakes the loop when this replica starts leading; newTerm makes the next cycle
	// forget what the previous term wrote (pending reasons, warnings), which another leader
	// may have changed meanwhile.
	leading chan struct{}
	newTerm atomic.Bool
	// ownersSynced report whether the owner informers' handlers have had their first lists
	ownersSynced []cache.InformerSynced
	// now is the clock cycles decide and mark by; nil is the wall clock (a simulation sets its
	// own: thrash_sim_test.go)
	now func() time.Time
	// synced is closed once the cache holds the informers' first lists (WaitSynced).
	synced chan struct{}
	// firstBind is closed once this process has had its first bind answered, or a cycle of
	// it has applied a plan that binds nothing (WaitFirstBind); firstBindOnce closes it.
	firstBind     chan struct{}
	firstBindOnce sync.Once
	// usage is S28's account of what each project held in each node pool, kept by the
	// scheduling goroutine (bounded by pools × projects); seeded holds an account made from the
	// usage history, handed over by SeedUsage and taken in by the next cycle.
	usage  *scheduler.UsageDecay
	seeded atomic.Pointer[scheduler.UsageDecay]
}

// clock is the time now, by the scheduler's clock.
func (s *Scheduler) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// New builds a scheduler; Run starts it.
func New(opts Options) (*Scheduler, error) {
	if opts.SchedulerName == "" {
		return nil, errors.New("kube: a scheduler name is required")
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Workers <= 0 {
		opts.Workers = 128
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.Observer == nil {
		opts.Observer = noObserver{}
	}
	if opts.Listing == nil {
		l, err := NewListing(opts.Config)
		if err != nil {
			return nil, err
		}
		opts.Listing = l
	}
	cfg := clientConfig(opts.Config)
	// Events get a client (and rate limit) of their own, so a burst of them never delays a bind.
	eventCfg := ComponentConfig(opts.Config)
	eventCfg.QPS, eventCfg.Burst = 200, 400
	eventClient, err := kubernetes.NewForConfig(eventCfg)
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	s := &Scheduler{
		opts: opts, log: opts.Log, client: opts.Listing.client, events: newEventWriter(eventClient, opts.SchedulerName, opts.Identity, opts.Log),
		leading: make(chan struct{}, 1), dynamic: dyn, metadata: meta, cache: NewCache(opts.SchedulerName),
		workers: opts.Workers, reload: make(chan struct{}, 1), reloads: reloads{read: make(chan struct{})}, lastReason: map[string]string{}, warned: map[string]bool{},
		tasks:        make(chan func(context.Context), 4096),
		ownerWatched: map[schema.GroupVersionResource]bool{},
		synced:       make(chan struct{}),
		firstBind:    make(chan struct{}),
	}
	s.priorityCls = newPriorityClassSync(s.client, opts.Log)
	s.events.acting = s.acting
	return s, nil
}

// acting reports whether this replica may write to the cluster now (Options.Acting).
func (s *Scheduler) acting() bool { return s.opts.Acting == nil || s.opts.Acting() }

// StartedLeading starts a new term: the next cycle runs at once and forgets the previous
// term's pending reasons and warnings, so that it writes them afresh.
func (s *Scheduler) StartedLeading() {
	s.newTerm.Store(true)
	select {
	case s.leading <- struct{}{}:
	default:
	}
}

// syncPriorityClasses makes the cluster's PriorityClasses match the dictionary (S1); only
// the acting replica writes them.
func (s *Scheduler) syncPriorityClasses(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	s.priorityCls.sync(ctx, s.settings.Load().Priorities, s.acting)
}

// ComponentConfig returns a copy of cfg set as Kubernetes' own control-plane components set
// theirs (kube-scheduler's and kube-controller-manager's options): protobuf, cheaper than JSON
// to encode and to decode (the API server encodes each watched object once per format; the
// dynamic client, which cannot use it, keeps JSON), and no gzip. Asked for gzip, the API server
// compresses every response over 128 KiB: on the network between the control plane and its
// components that costs its CPU and the client's more than it saves, and a start's first
// lists (10,000 pods, 5,000 Jobs, 1,250 nodes) are the responses it compressed most.
func ComponentConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	c.DisableCompression = true
	return c
}

// SeedUsage hands the loop an account of past use made from the usage history (a new
// leader's, at the start of its term); the next cycle schedules from it.
func (s *Scheduler) SeedUsage(u *scheduler.UsageDecay) { s.seeded.Store(u) }

// Last returns the most recent cycle's result, or nil before the first.
func (s *Scheduler) Last() *Result { return s.last.Load() }

// PriorityClassStatus reports a dictionary entry's PriorityClass status (S1).
func (s *Scheduler) PriorityClassStatus(name string) string { return s.priorityCls.status(name) }

// settle is how long a cycle waits after a change for more changes to arrive.
const settle = 5 * time.Millisecond

// Run starts the informers, waits for them to sync, and schedules until ctx is cancelled.
func (s *Scheduler) Run(ctx context.Context) error {
	began := time.Now()
	if err := s.loadSettings(ctx); err != nil {
		return err
	}
	// The cache groups the informers' first lists by these settings as they arrive; without
	// them it would group the backlog once by none, and the first cycle, giving them, would
	// group every workload again.
	s.cache.SetSettings(s.settings.Load())
	s.events.run(ctx, 8)

	factory := s.opts.Listing.factory
	podInf := factory.Core().V1().Pods().Informer()
	nodeInf := factory.Core().V1().Nodes().Informer()
	pcInf := factory.Scheduling().V1().PriorityClasses().Informer()
	podReg, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.cache.UpsertPod(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { s.cache.UpsertPod(obj.(*corev1.Pod)) },
		DeleteFunc: func(obj any) {
			if p, ok := tombstone[*corev1.Pod](obj); ok {
				s.cache.DeletePod(p.UID)
			}
		},
	})
	if err != nil {
		return err
	}
	nodeReg, err := nodeInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.cache.UpsertNode(obj.(*corev1.Node)) },
		UpdateFunc: func(_, obj any) { s.cache.UpsertNode(obj.(*corev1.Node)) },
		DeleteFunc: func(obj any) {
			if n, ok := tombstone[*corev1.Node](obj); ok {
				s.cache.DeleteNode(n.Name)
			}
		},
	})
	if err != nil {
		return err
	}
	if err := s.priorityCls.watch(pcInf); err != nil {
		return err
	}
	owners := ownerFactories{
		typed:    factory,
		metadata: metadatainformer.NewSharedInformerFactoryWithOptions(s.metadata, 0, metadatainformer.WithTransform(dropManagedFields)),
		dynamic:  dynamicinformer.NewDynamicSharedInformerFactory(s.dynamic, 0),
	}
	served := s.servedAtStart()
	if err := s.watchOwners(ctx, owners, served); err != nil {
		return err
	}
	if err := s.watchTopologies(ctx, owners.dynamic, owners.metadata, served); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	// An informer has synced once its store holds the first list; its handlers get those
	// objects afterwards, from a buffer. Wait until the cache has them too: a first cycle
	// taken earlier sees part of the cluster (with a backlog of 10,000 pods, 1,315 of them),
	// and after a failover, pods running on nodes it does not know of yet. A handler has
	// synced only once its informer has, so this waits for the informers as well.
	s.ownersMu.Lock()
	handlers := append([]cache.InformerSynced{podReg.HasSynced, nodeReg.HasSynced}, s.ownersSynced...)
	s.ownersMu.Unlock()
	if !waitSynced(ctx, handlers...) {
		return fmt.Errorf("kube: the cache did not receive the informers' first lists: %w", ctx.Err())
	}
	// The informers without a handler the cache waits on (PriorityClasses,
	// CustomResourceDefinitions): long synced by now, their small lists are checked at once.
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("kube: informer for %v did not sync", typ)
		}
	}
	for _, f := range []interface {
		WaitForCacheSync(<-chan struct{}) map[schema.GroupVersionResource]bool
	}{owners.metadata, owners.dynamic} {
		for gvr, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("kube: informer for %v did not sync", gvr)
			}
		}
	}
	close(s.synced)
	s.syncPriorityClasses(ctx)
	s.runWorkers(ctx)
	s.log.Info("scheduler informers synced", "scheduler", s.opts.SchedulerName, "took", time.Since(began).Round(time.Millisecond))

	reloaded := make(chan struct{}, 1)
	go s.reloadSettings(ctx, reloaded)
	ticker := time.NewTicker(s.opts.Interval)
	defer ticker.Stop()
	termBegun := false // a term's PriorityClasses are synced after its first cycle
	for {
		var decided time.Duration // the CPU-bound part of the cycle; its API calls wait on others
		if s.acting() {
			decided = s.cycle(ctx)
		}
		if termBegun {
			termBegun = false
			s.syncPriorityClasses(ctx)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-s.cache.Changed():
			// Let a burst of events (a Job creating its pods) settle into one cycle, and
			// never spend more than half the time deciding: under a flood of pods the
			// informers need the CPU too, or the API server drops their watches as too slow
			// and they list everything again. The time the cycle waited on its evictions'
			// API calls is not counted: the CPU was free for the informers then, and counting
			// it delayed by as much the cycle that binds a preemptor once its victims are gone.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(max(settle, decided)):
			}
		case <-s.priorityCls.notify:
			s.syncPriorityClasses(ctx)
		case <-reloaded:
			s.syncPriorityClasses(ctx)
		case <-s.leading:
			// The term's first cycle goes first: a bind needs no PriorityClass (they are for
			// pods yet to be created), and their API calls, before it, delayed the first bind.
			termBegun = true
		}
	}
}

// cycle settles the cache, takes a snapshot, plans, applies and publishes the result; it
// returns how long deciding took (snapshot and plan, not the API calls).
func (s *Scheduler) cycle(ctx context.Context) time.Duration {
	s.awaitSettings(ctx) // a configuration change committed before the cycle is in it
	start := s.clock()
	newTerm := s.newTerm.Swap(false)
	if newTerm {
		clear(s.lastReason)
		clear(s.warned)
		if s.usage != nil {
			s.usage.Interrupt() // what was held while another replica led is not known here
		}
	}
	settings := s.settings.Load()
	s.cache.SetSettings(settings)
	s.cache.Settle(start) // S19: evictions done, preemptors nominated; the snapshot only copies
	view := s.cache.Snapshot(start)
	if seeded := s.seeded.Swap(nil); seeded != nil {
		s.usage = seeded
	} else if s.usage == nil {
		s.usage = scheduler.NewUsageDecay(view.Snapshot.NodePools)
	}
	view.Snapshot.HistoricalUsage = s.usage.Value(start, view.Snapshot.NodePools) // S28
	var prev *View
	// A new term's first cycle compares with nothing: every workload counts as new, so the
	// term's recorder, which starts from the database, sees each one at least once, even one
	// unchanged since this replica last led.
	if last := s.last.Load(); last != nil && !newTerm {
		prev = last.View
	}
	view.CompareWith(prev)
	plan := view.Snapshot.Plan()
	s.usage.Observe(start, &plan, view.Snapshot.NodePools)
	decided := s.clock()
	s.apply(ctx, &plan, view)
	if len(plan.Binds) == 0 {
		s.firstBound()
	}
	r := &Result{At: start, Decide: decided.Sub(start), Apply: s.clock().Sub(decided), View: view, Plan: &plan}
	s.last.Store(r)
	if newTerm {
		// How long a start or a failover took to its first decisions (docs/performance.md).
		s.log.Info("first cycle of the term", "began", start.Format("15:04:05.000"), "workloads", len(view.Snapshot.Workloads), "binds", len(plan.Binds),
			"evictions", len(plan.Evictions), "decide", r.Decide.Round(time.Microsecond), "apply", r.Apply.Round(time.Microsecond))
	}
	if len(plan.Binds)+len(plan.Evictions)+len(plan.Resumes) > 0 {
		s.log.Debug("cycle", "workloads", len(view.Snapshot.Workloads), "rebuilt", len(view.rebuilt), "binds", len(plan.Binds), "evictions", len(plan.Evictions), "resumes", len(plan.Resumes),
			"pending", len(plan.Pending), "decide", r.Decide, "apply", r.Apply)
	}
	if s.opts.OnCycle != nil {
		s.opts.OnCycle(r)
	}
	return r.Decide
}
