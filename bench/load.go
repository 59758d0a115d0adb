// Package bench holds Arbiter's scale benchmarks (make bench): figures, not pass/fail tests.
package bench

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Latencies are the durations of requests sent at a fixed rate.
type Latencies struct {
	Durations []time.Duration
	Errors    int
}

// Percentile returns the p-th percentile (0-100) of the durations.
func (l Latencies) Percentile(p float64) time.Duration {
	if len(l.Durations) == 0 {
		return 0
	}
	d := slices.Clone(l.Durations)
	slices.Sort(d)
	i := int(float64(len(d)-1) * p / 100)
	return d[i]
}

// ConstantRate sends GET url at rate requests per second for the duration, open-loop (each
// request starts on schedule whether or not earlier ones have finished, so a slow server
// shows as latency rather than as a lower rate), and records each request's latency
// measured from its scheduled start.
func ConstantRate(ctx context.Context, client *http.Client, url string, rate int, duration time.Duration) Latencies {
	total := int(float64(rate) * duration.Seconds())
	interval := time.Second / time.Duration(rate)
	var mu sync.Mutex
	var res Latencies
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < total && ctx.Err() == nil; i++ {
		due := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(due))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok := get(ctx, client, url)
			took := time.Since(due)
			mu.Lock()
			res.Durations = append(res.Durations, took)
			if !ok {
				res.Errors++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return res
}

func get(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	res, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}
