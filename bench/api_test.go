package bench

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testdb"
	"github.com/arbiterhq/arbiter/server"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// BenchmarkAPIWorkloadTypes measures GET /api/v1/workload-types at 500 requests/s on
// loopback for 10 s against `arbiter serve` on real PostgreSQL (target: p99 ≤ 5 ms).
// Run with -benchtime=1x: one run is one 10-second load.
func BenchmarkAPIWorkloadTypes(b *testing.B) {
	url := startServe(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	// Warm up connections and the database's caches.
	ConstantRate(context.Background(), client, url+"/api/v1/workload-types", 200, time.Second)
	b.ResetTimer()
	var lat Latencies
	for b.Loop() {
		lat = ConstantRate(context.Background(), client, url+"/api/v1/workload-types", 500, 10*time.Second)
	}
	b.StopTimer()
	b.ReportMetric(float64(lat.Percentile(50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat.Percentile(99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat.Percentile(100).Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(len(lat.Durations)), "requests")
	b.ReportMetric(float64(lat.Errors), "errors")
}

func startServe(b *testing.B) string {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	cfg := server.Config{Addr: "127.0.0.1:0", DataDir: b.TempDir(), DatabaseURL: testdb.NewURL(b), SchedulerName: "arbiter", Kubeconfig: server.NoCluster}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { done <- server.Serve(ctx, cfg, log, io.Discard, ready) }()
	var url string
	select {
	case url = <-ready:
	case err := <-done:
		b.Fatalf("serve: %v", err)
	}
	b.Cleanup(func() { cancel(); <-done })
	return url
}
