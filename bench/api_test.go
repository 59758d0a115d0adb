package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// BenchmarkAPIWorkloadTypes measures GET /api/v1/workload-types at 500 requests/s on
// loopback for 10 s against `arbiter serve` on real PostgreSQL (target: p99 ≤ 5 ms).
// Run with -benchtime=1x: one run is one 10-second load.
func BenchmarkAPIWorkloadTypes(b *testing.B) {
	api := startServe(b)
	benchmarkGET(b, api, "/api/v1/workload-types")
}

// benchWorkloads is how many workload records BenchmarkAPIWorkloads lists over: 5,000
// running and 10,000 pending (the scheduling-cycle benchmark's shape) and 5,000 finished.
const benchWorkloads = 20000

// BenchmarkAPIWorkloads measures GET /api/v1/workloads?limit=50 (the first page, newest
// queue time last: the default sort) over 20,000 workload records at 500 requests/s on
// loopback for 10 s (target: p99 ≤ 20 ms). Run with -benchtime=1x.
func BenchmarkAPIWorkloads(b *testing.B) {
	api := startServe(b)
	seedWorkloads(b, api.st, benchWorkloads)
	benchmarkGET(b, api, "/api/v1/workloads?limit=50")
}

// benchmarkGET sends GET path at 500 requests/s for 10 s as an admin (API key) and reports
// the latency percentiles.
func benchmarkGET(b *testing.B, api benchAPI, path string) {
	b.Helper()
	measureGET(b, api.url+path, api.token, 500)
}

// measureGET sends GET url at rate requests/s for 10 s with the API key, after a second's
// warm-up of connections and the database's caches, and reports the latency percentiles.
func measureGET(b *testing.B, url, token string, rate int) {
	b.Helper()
	ctx := context.Background()
	client := &http.Client{Transport: bearer{token: token, base: &http.Transport{MaxIdleConnsPerHost: 256}}}
	if !get(ctx, client, url) {
		b.Fatalf("GET %s does not answer 200", url)
	}
	ConstantRate(ctx, client, url, min(rate, 200), time.Second)
	b.ResetTimer()
	var lat Latencies
	for b.Loop() {
		lat = ConstantRate(ctx, client, url, rate, 10*time.Second)
	}
	b.StopTimer()
	b.ReportMetric(float64(lat.Percentile(50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat.Percentile(99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat.Percentile(100).Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(len(lat.Durations)), "requests")
	b.ReportMetric(float64(lat.Errors), "errors")
}

// benchAPI is a running `arbiter serve`, its database and an admin API key.
type benchAPI struct {
	url   string
	st    *store.Store
	token string
}

// startServe runs `arbiter serve` as its own process (as in production, so the load generator
// in this process does not share a Go runtime with the server) on a fresh database, without a
// cluster, and waits until it answers.
func startServe(b *testing.B) benchAPI {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dbURL := testdb.NewURL(b)
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	st := store.New(pool)
	bin := filepath.Join(b.TempDir(), "arbiter")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/arbiter").CombinedOutput(); err != nil {
		b.Fatalf("build arbiter: %v\n%s", err, out)
	}
	addr, err := devcluster.FreeAddr() // below the ports outgoing connections take meanwhile
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", addr, "--database-url", dbURL, "--kubeconfig", server.NoCluster,
		"--data-dir", b.TempDir(), "--log-level", "warn")
	cmd.Env = append(os.Environ(), "ARBITER_ADMIN_PASSWORD=bench-password")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		cancel()
		pool.Close()
	})
	url := "http://" + addr
	poll.UntilNil(b, "arbiter serve is ready", time.Minute, func() error {
		res, err := http.Get(url + "/readyz")
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz = %d", res.StatusCode)
		}
		return nil
	})
	return benchAPI{url: url, st: st, token: adminKey(b, st)}
}

// adminKey creates a system admin API key in the database, as an admin would, and returns
// its token.
func adminKey(b *testing.B, st *store.Store) string {
	b.Helper()
	id := uuid.New()
	token, hash := auth.NewAPIKey(id)
	_, err := st.CreateAPIKey(context.Background(), store.NewAPIKey{ID: id, Name: "bench", Role: string(auth.RoleAdmin),
		ScopeType: string(auth.ScopeSystem), ExpiresAt: time.Now().Add(time.Hour), SecretHash: hash},
		store.Actor{Subject: "bench", SubjectType: "system"})
	if err != nil {
		b.Fatal(err)
	}
	return token
}

// bearer sends every request with the API key.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.base.RoundTrip(r)
}

// seedWorkloads records n workloads in 20 departments of 10 projects each, in batches of
// 1,000: a quarter running, half pending (with queue positions and reasons), a quarter
// finished; queue times one second apart.
func seedWorkloads(b *testing.B, st *store.Store, n int) {
	b.Helper()
	ctx := context.Background()
	t0 := time.Now().Add(-time.Duration(n) * time.Second)
	prios := []struct {
		name  string
		value int
	}{{"low", 40}, {"medium", 80}, {"high", 125}, {"very-high", 150}}
	queue := map[string]int{}
	start := time.Now()
	for from := 0; from < n; from += 1000 {
		batch := make([]store.WorkloadRecord, 0, 1000)
		for i := from; i < min(from+1000, n); i++ {
			dept, proj := i%20, i%200
			p := prios[i%len(prios)]
			r := store.WorkloadRecord{
				UID: uuid.NewString(), Namespace: fmt.Sprintf("team-%03d", proj), Name: fmt.Sprintf("train-%05d", i),
				Kind: "Job", APIGroup: "batch", TypeName: "Job", CategoryName: "Train",
				ProjectName: fmt.Sprintf("project-%03d", proj), DepartmentName: fmt.Sprintf("department-%02d", dept),
				PriorityName: p.name, PriorityValue: p.value, Preemptibility: "preemptible", Gang: 1,
				RequestedGPUs: 1 + i%8, NodePool: "default", QueuedAt: t0.Add(time.Duration(i) * time.Second),
			}
			started := r.QueuedAt.Add(time.Minute)
			switch i % 4 {
			case 0:
				r.Phase, r.AllocatedGPUs, r.StartedAt, r.Nodes = "Running", r.RequestedGPUs, &started, []string{fmt.Sprintf("node-%04d", i%1000)}
			case 1:
				finished := started.Add(time.Hour)
				r.Phase, r.StartedAt, r.FinishedAt = "Completed", &started, &finished
			default:
				queue[r.ProjectName]++
				r.Phase, r.QueuePosition, r.Reason = "Pending", queue[r.ProjectName], "InsufficientCapacity"
				r.Message = fmt.Sprintf("Waiting for %d free GPUs in node pool default.", r.RequestedGPUs)
			}
			batch = append(batch, r)
		}
		if err := st.RecordWorkloads(ctx, batch, nil); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := st.Pool().Exec(ctx, "ANALYZE workloads"); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d workload records in %s", n, time.Since(start).Round(time.Millisecond))
}
