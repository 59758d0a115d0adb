package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
)

// BenchmarkAuthenticatedCallDuringUnauthenticatedFlood measures what one client sending
// unauthenticated POSTs as fast as it can for 10 s costs everyone else: the audit rows it
// makes the server write, and the p50 of authenticated API calls before and during the flood:
// a read (GET /api/v1/org-unit/projects) and a change, which writes its own audit row (PUT of a
// workload category's default preemptibility). Run with -benchtime=1x. "unpaced" is the client
// as fast as it can; "1000/s" paces it at about the rate an attacker's probe reached (880/s, docs/security.md), so
// the figures compare the server's work per refusal rather than how fast the client gets.
func BenchmarkAuthenticatedCallDuringUnauthenticatedFlood(b *testing.B) {
	b.Run("unpaced", func(b *testing.B) { benchmarkFlood(b, 0) })
	b.Run("1000/s", func(b *testing.B) { benchmarkFlood(b, time.Millisecond) })
}

// benchmarkFlood floods with one unauthenticated POST every interval (0: back to back).
func benchmarkFlood(b *testing.B, interval time.Duration) {
	st := store.New(testdb.New(b))
	srv := httptest.NewServer(web.New(deps(st)))
	b.Cleanup(srv.Close)
	key := newAPIKey(b, st, "admin", "system", "")
	call := func(c *http.Client, token, method, path, body string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	category := "/api/v1/workload-categories/" + store.SeedID("category", "Train").String()
	p50 := func(d time.Duration) (read, change time.Duration) { // of authenticated calls made for d
		c := &http.Client{}
		var reads, changes []time.Duration
		for i, end := 0, time.Now().Add(d); time.Now().Before(end); i++ {
			start := time.Now()
			call(c, key, "GET", "/api/v1/org-unit/projects", "")
			reads = append(reads, time.Since(start))
			start = time.Now()
			call(c, key, "PUT", category, `{"defaultPreemptibility":"`+[]string{"preemptible", "non-preemptible"}[i%2]+`"}`)
			changes = append(changes, time.Since(start))
		}
		slices.Sort(reads)
		slices.Sort(changes)
		return reads[len(reads)/2], changes[len(changes)/2]
	}
	rows := func() int { // audit rows of refused requests (the changes' own rows are "success")
		all, err := st.AuditEntries(context.Background(), 1_000_000)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, e := range all {
			if e.Result != "success" {
				n++
			}
		}
		return n
	}
	for range b.N {
		quietRead, quietChange := p50(3 * time.Second)
		before := rows()
		var flooded atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{}
			next := time.Now()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if wait := time.Until(next); wait > 0 {
					time.Sleep(wait)
				}
				next = next.Add(interval)
				call(c, "", "POST", "/api/v1/org-unit/projects", `{"name":"p"}`)
				flooded.Add(1)
			}
		}()
		floodRead, floodChange := p50(10 * time.Second)
		close(stop)
		wg.Wait()
		written := rows() - before
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(quietRead), "read-p50-quiet-ms")
		b.ReportMetric(ms(floodRead), "read-p50-flood-ms")
		b.ReportMetric(ms(quietChange), "change-p50-quiet-ms")
		b.ReportMetric(ms(floodChange), "change-p50-flood-ms")
		b.ReportMetric(float64(flooded.Load())/10, "flood-req/s")
		b.ReportMetric(float64(written), "audit-rows")
	}
}
