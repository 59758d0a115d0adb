package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/arbiterhq/arbiter/internal/metrics"
)

// metricsOnMainPort is the /metrics handler of the console's port, or nil when --metrics-addr
// gives the metrics a listener of their own (an operator who sets it usually wants them off the
// port users reach).
func metricsOnMainPort(c Config, m *metrics.Registry) http.Handler {
	if c.MetricsAddr != "" {
		return nil
	}
	return m.Handler()
}

// serveMetrics serves /metrics alone on --metrics-addr. A serving error other than a shutdown
// goes to errc, as the main server's do; the returned function shuts the listener down.
func serveMetrics(c Config, m *metrics.Registry, log *slog.Logger, errc chan<- error) (stop func(), err error) {
	ln, err := net.Listen("tcp", c.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (--metrics-addr): %w", c.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := httpServer(mux, c)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			select {
			case errc <- fmt.Errorf("metrics listener: %w", err):
			default:
			}
		}
	}()
	log.Info("metrics are served", "url", "http://"+displayAddr(ln.Addr().String())+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
