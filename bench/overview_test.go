package bench

import (
	"context"
	"fmt"
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

	measureGET(b, api.url+"/", api.token, 100)
}

// BenchmarkWorkloadsPage measures GET /workloads (the console's Workloads page, its first 50
// rows in the default order) as an admin over 20,000 workload records at 100 requests/s on
// loopback for 10 s (target: p99 ≤ 30 ms). Run with -benchtime=1x.
func BenchmarkWorkloadsPage(b *testing.B) {
	api := startServe(b)
	seedWorkloads(b, api.st, benchWorkloads)
	measureGET(b, api.url+"/workloads", api.token, 100)
}

// BenchmarkOverviewCluster measures GET / at 100 requests/s for 10 s with the cluster behind
// it: 500 kwok nodes × 8 GPUs on the local control plane, filled by 4,000 one-GPU Jobs that
// Arbiter scheduled (target: p99 ≤ 30 ms). The node tiles, the pool allocation and the
// project bars then come from a live snapshot of 500 nodes and 4,000 workloads.
// Run with -benchtime=1x.
func BenchmarkOverviewCluster(b *testing.B) {
	cb := startClusterBench(b)
	ns := cb.project("overview", benchNodes*benchGPUs)
	cb.createJobs(ns, "overview", "arbiter", benchJobs, nil)
	if _, ok := cb.waitRunning(benchJobs, 10*time.Minute); !ok {
		b.Fatalf("only %d of %d pods Running", cb.running.Load(), benchJobs)
	}
	// Arbiter at rest with 500 nodes and 4,000 running pods: its CPU over 30 s of cycles with nothing to decide but everything to keep, and its resident memory.
	arbiter := map[string]int{"arbiter": cb.arbiter.pid}
	before := readCPU(arbiter)
	time.Sleep(30 * time.Second)
	b.Logf("at rest, 500 nodes / %d running pods, 30 s: %s; %s; %s", benchJobs,
		readCPU(arbiter).since(before), residentMemory(cb.arbiter.pid), peakMemory(arbiter))
	measureGET(b, cb.arbiter.url+"/", adminKey(b, cb.st), 100)
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
