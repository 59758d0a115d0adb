package server

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// clusterHealth asks the API server's /readyz every few seconds. While it does not answer,
// the scheduler does not act (no cycle, no API call that would only time out, no log line per
// attempt), the log says so once, and the console shows since when (docs/operations.md "When
// the API server is down"). client-go's informers and the lease renewal back off on their
// own meanwhile.
type clusterHealth struct {
	client   kubernetes.Interface
	interval time.Duration
	timeout  time.Duration
	log      *slog.Logger
	down     atomic.Pointer[time.Time] // nil while reachable
}

func newClusterHealth(cfg *rest.Config, log *slog.Logger) (*clusterHealth, error) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = 5, 5
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, err
	}
	return &clusterHealth{client: client, interval: 2 * time.Second, timeout: 3 * time.Second, log: log}, nil
}

func (h *clusterHealth) run(ctx context.Context) {
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		h.probe(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (h *clusterHealth) probe(ctx context.Context) {
	began := time.Now()
	pctx, cancel := context.WithTimeout(ctx, h.timeout)
	err := h.client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(pctx).Error()
	cancel()
	if ctx.Err() != nil {
		return
	}
	down := h.down.Load()
	switch {
	case err != nil && down == nil:
		h.down.Store(&began)
		h.log.Warn("the Kubernetes API server is unreachable; scheduling pauses and resumes by itself once it answers",
			"err", err, "probe_every", h.interval)
	case err == nil && down != nil:
		h.down.Store(nil)
		h.log.Info("the Kubernetes API server answers again; scheduling resumes", "unreachable_for", time.Since(*down).Round(time.Second))
	}
}

// Reachable reports whether the last probe was answered (nil: no probing, always).
func (h *clusterHealth) Reachable() bool { return h == nil || h.down.Load() == nil }

// UnreachableSince is when the API server stopped answering, zero while it answers.
func (h *clusterHealth) UnreachableSince() time.Time {
	if h == nil {
		return time.Time{}
	}
	if d := h.down.Load(); d != nil {
		return *d
	}
	return time.Time{}
}
