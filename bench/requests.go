package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// apiRequests counts the API server's requests by "VERB resource[/subresource]", read from
// its apiserver_request_total metric.
type apiRequests map[string]float64

func readRequests(ctx context.Context, client kubernetes.Interface) apiRequests {
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil
	}
	out := apiRequests{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		labels, value, ok := strings.Cut(strings.TrimPrefix(line, "apiserver_request_total{"), "} ")
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		l := map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			l[k] = strings.Trim(v, `"`)
		}
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		out[key] += n
	}
	return out
}

// since formats the requests made between two readings, most first, leaving out the ones
// made fewer than 100 times: "POST pods/binding 4000, …".
func (r apiRequests) since(before apiRequests) string {
	type count struct {
		key string
		n   float64
	}
	var counts []count
	for k, n := range r {
		if d := n - before[k]; d >= 100 {
			counts = append(counts, count{k, d})
		}
	}
	slices.SortFunc(counts, func(a, b count) int { return int(b.n - a.n) })
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = fmt.Sprintf("%s %.0f", c.key, c.n)
	}
	return "API requests: " + strings.Join(parts, ", ")
}
