package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// apiRequests is what the API server's metrics say it has served so far: requests by
// "VERB resource[/subresource]" (apiserver_request_total), the histogram of how long it took to
// serve binds (apiserver_request_duration_seconds, by upper bound), and how many watchers it
// dropped as too slow (apiserver_terminated_watchers_total). The bind histogram tells the API
// server's part of a bind from the scheduler's own.
type apiRequests struct {
	counts             map[string]float64
	bindSeconds        map[float64]float64 // cumulative count by bucket upper bound
	terminatedWatchers float64
}

func readRequests(ctx context.Context, client kubernetes.Interface) apiRequests {
	out := apiRequests{counts: map[string]float64{}, bindSeconds: map[float64]float64{}}
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, labels, value, ok := metricLine(sc.Text())
		if !ok {
			continue
		}
		switch name {
		case "apiserver_request_total":
			key := labels["verb"] + " " + labels["resource"]
			if labels["subresource"] != "" {
				key += "/" + labels["subresource"]
			}
			out.counts[key] += value
		case "apiserver_request_duration_seconds_bucket":
			if labels["verb"] != "POST" || labels["resource"] != "pods" || labels["subresource"] != "binding" {
				continue
			}
			le, err := strconv.ParseFloat(labels["le"], 64) // "+Inf" parses as +Inf
			if err == nil {
				out.bindSeconds[le] += value
			}
		case "apiserver_terminated_watchers_total":
			out.terminatedWatchers += value
		}
	}
	return out
}

// metricLine splits a line of the Prometheus text format, `name{k="v",…} value`.
func metricLine(line string) (name string, labels map[string]string, value float64, ok bool) {
	if strings.HasPrefix(line, "#") {
		return "", nil, 0, false
	}
	series, v, found := strings.Cut(line, " ")
	if !found {
		return "", nil, 0, false
	}
	value, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return "", nil, 0, false
	}
	name, rest, _ := strings.Cut(series, "{")
	labels = map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
		if k, v, found := strings.Cut(kv, "="); found {
			labels[k] = strings.Trim(v, `"`)
		}
	}
	return name, labels, value, true
}

// since formats what was served between two readings: requests most first, leaving out the
// ones made fewer than 100 times ("POST pods/binding 4000, …"), the API server's median time to
// serve a bind, and the watchers it dropped.
func (r apiRequests) since(before apiRequests) string {
	type count struct {
		key string
		n   float64
	}
	var counts []count
	for k, n := range r.counts {
		if d := n - before.counts[k]; d >= 100 {
			counts = append(counts, count{k, d})
		}
	}
	slices.SortFunc(counts, func(a, b count) int { return int(b.n - a.n) })
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = fmt.Sprintf("%s %.0f", c.key, c.n)
	}
	return fmt.Sprintf("API requests: %s; API server's time to serve a bind p50 %s; watchers dropped as too slow: %.0f",
		strings.Join(parts, ", "), r.bindQuantile(before, 0.5).Round(time.Millisecond), r.terminatedWatchers-before.terminatedWatchers)
}

// bindQuantile estimates a quantile of the bind durations observed between two readings,
// interpolating linearly within the histogram bucket it falls in, as Prometheus'
// histogram_quantile does.
func (r apiRequests) bindQuantile(before apiRequests, q float64) time.Duration {
	bounds := make([]float64, 0, len(r.bindSeconds))
	for le := range r.bindSeconds {
		bounds = append(bounds, le)
	}
	slices.Sort(bounds)
	if len(bounds) == 0 {
		return 0
	}
	total := r.bindSeconds[bounds[len(bounds)-1]] - before.bindSeconds[bounds[len(bounds)-1]]
	if total <= 0 {
		return 0
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for _, le := range bounds {
		n := r.bindSeconds[le] - before.bindSeconds[le]
		if n >= rank {
			if math.IsInf(le, 1) {
				return time.Duration(lower * float64(time.Second))
			}
			frac := (rank - below) / max(n-below, 1e-9)
			return time.Duration((lower + (le-lower)*frac) * float64(time.Second))
		}
		lower, below = le, n
	}
	return 0
}
