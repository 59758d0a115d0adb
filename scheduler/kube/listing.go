package kube

import (
	"context"
	"fmt"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
