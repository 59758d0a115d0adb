package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
)

// BenchmarkOverview measures GET / (the Overview) as an admin over 4,000 workload records
// (seedWorkloads' shape), 200 projects with quotas in 20 departments and 2,000 preemption
// events of the last day, at 100 requests/s on loopback for 10 s (target: p99 ≤ 30 ms).
// Without a cluster the node figures are zeros; the database work is what is measured.
// Run with -benchtime=1x.
func BenchmarkOverview(b *testing.B) {
	api := startServe(b)
	ctx := context.Background()
	by := store.Actor{Subject: "bench", SubjectType: "system"}
	pool := store.DefaultNodePoolID
	for d := 0; d < 20; d++ {
		name := fmt.Sprintf("department-%02d", d)
		dept, err := api.st.CreateDepartment(ctx, store.DepartmentUpdate{Name: set(name),
			Resources: set([]store.QuotaInput{{NodePoolID: &pool, Deserved: 1000}})}, by)
		if err != nil {
			b.Fatal(err)
		}
		for p := d; p < 200; p += 20 {
			_, err := api.st.CreateProject(ctx, store.ProjectUpdate{Name: set(fmt.Sprintf("project-%03d", p)), DepartmentID: set(dept.ID),
				Namespaces: set([]string{fmt.Sprintf("team-%03d", p)}), Resources: set([]store.QuotaInput{{NodePoolID: &pool, Deserved: 8}})}, by)
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	seedWorkloads(b, api.st, 4000)
	running, _, err := api.st.Workloads(ctx, runningQuery(b), false)
	if err != nil {
		b.Fatal(err)
	}
	var events []store.WorkloadEvent
	for i := 0; i < 2000; i++ {
		kind := "Preempted"
		if i%2 == 1 {
			kind = "Reclaimed"
		}
		events = append(events, store.WorkloadEvent{WorkloadUID: running[i%len(running)].UID, Kind: kind,
			At: time.Now().Add(-time.Duration(i) * time.Minute)})
	}
	if err := api.st.RecordWorkloads(ctx, nil, events); err != nil {
		b.Fatal(err)
	}

	client := &http.Client{Transport: bearer{token: api.token, base: &http.Transport{MaxIdleConnsPerHost: 256}}}
	url := api.url + "/"
	if !get(ctx, client, url) {
		b.Fatal("GET / does not answer 200")
	}
	ConstantRate(ctx, client, url, 100, time.Second)
	b.ResetTimer()
	var lat Latencies
	for b.Loop() {
		lat = ConstantRate(ctx, client, url, 100, 10*time.Second)
	}
	b.StopTimer()
	b.ReportMetric(float64(lat.Percentile(50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat.Percentile(99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat.Percentile(100).Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(len(lat.Durations)), "requests")
	b.ReportMetric(float64(lat.Errors), "errors")
}

// set is a store.Optional that is set.
func set[T any](v T) store.Optional[T] { return store.Optional[T]{Set: true, Value: &v} }

func runningQuery(b *testing.B) listquery.Query {
	q, err := listquery.Parse(url.Values{"filterBy": {"phase==Running"}, "limit": {"500"}}, store.WorkloadSpec)
	if err != nil {
		b.Fatal(err)
	}
	return q
}
