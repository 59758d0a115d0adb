package kube

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Listing is the scheduler's client and its informers of pods, nodes and Jobs. A process
// starts it before anything else (server.Serve), so that the cluster's first lists, most of a
// start's time to its first bind, arrive while the database is opened and the settings are
// read; Run then adds the cache's handlers, once it has its settings. An informer hands a
// handler added late every object it holds, and Run waits until the handlers have had them
// all, so the cache still takes in the first lists once, grouped by the settings, and the
// first cycle still sees the whole cluster.
type Listing struct {
	client  kubernetes.Interface
	factory informers.SharedInformerFactory
}

// NewListing connects to the cluster as the scheduler does: its component settings
// (ComponentConfig) and its rate limits.
func NewListing(cfg *rest.Config) (*Listing, error) {
	client, err := kubernetes.NewForConfig(clientConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	return &Listing{client: client, factory: informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(dropManagedFields))}, nil
}

// clientConfig is cfg as the scheduler's clients use it (but the events' own): ComponentConfig,
// and far more than client-go's default 5 QPS, for binding thousands of pods a second.
func clientConfig(cfg *rest.Config) *rest.Config {
	c := ComponentConfig(cfg)
	c.QPS, c.Burst = 2000, 4000
	return c
}

// Start lists and watches pods, nodes and Jobs until ctx ends. Every Kubernetes API server
// serves the three (Jobs are batch/v1, which watchOwners would watch anyway).
func (l *Listing) Start(ctx context.Context) {
	l.factory.Core().V1().Pods().Informer()
	l.factory.Core().V1().Nodes().Informer()
	l.factory.Batch().V1().Jobs().Informer()
	l.factory.Start(ctx.Done())
}

// syncPoll is how often a start looks whether the informers' first lists have reached the
// cache. client-go's WaitForCacheSync looks every 100 ms, and a start waited through two of
// them, one for the informers and one for their handlers: measured on a backlog of 10,000
// pods, 13–95 ms after the last handler had its list, each of them before the first bind.
// A look is a few mutexes; 2 ms keeps the wait within a cycle's settle.
const syncPoll = 2 * time.Millisecond

// waitSynced waits until every one of synced reports true, and reports whether they all did
// before ctx ended.
func waitSynced(ctx context.Context, synced ...cache.InformerSynced) bool {
	err := wait.PollUntilContextCancel(ctx, syncPoll, true, func(context.Context) (bool, error) {
		for _, ok := range synced {
			if !ok() {
				return false, nil
			}
		}
		return true, nil
	})
	return err == nil
}
