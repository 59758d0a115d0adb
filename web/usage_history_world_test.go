package web_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// usageWorld is newOrgWorld's organization with two hours of usage history in pool a100,
// recorded every ten minutes from usageStart:
//
//	         first hour                               second hour
//	A1       2 non-preemptible, 1 preemptible,        nothing allocated, deserved 2
//	         1 borrowed, 1 pending; deserved 2
//	A2       1 non-preemptible, deserved 2            the same
//	B1       3 borrowed, deserved 2, 1 preemption     the same, no preemption
//	capacity 8 GPUs                                   8 GPUs
type usageWorld struct {
	*orgWorld
}

// usageStart is the history's first sample: a fixed past hour, so that buckets and days are
// the same whenever the test runs.
var usageStart = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

const usageInterval = 10 * time.Minute

func newUsageWorld(t *testing.T) *usageWorld {
	t.Helper()
	w := &usageWorld{newOrgWorld(t)}
	id := func(key string) uuid.UUID { return uuid.MustParse(w.proj[key]) }
	dept := func(key string) uuid.UUID { return uuid.MustParse(w.dept[key]) }
	for i := range 12 {
		at := usageStart.Add(time.Duration(i) * usageInterval)
		a1 := store.ProjectUsage{ProjectID: id("A1"), DepartmentID: dept("A"), Deserved: 2}
		if i < 6 {
			a1.NonPreemptible, a1.Preemptible, a1.Borrowed, a1.Pending = 2, 1, 1, 1
		}
		b1 := store.ProjectUsage{ProjectID: id("B1"), DepartmentID: dept("B"), Borrowed: 3, Deserved: 2}
		if i == 0 {
			b1.Preemptions = 1
		}
		recordUsage(t, w.st, store.UsageSample{At: at, Interval: usageInterval, Pools: []store.PoolUsage{{NodePool: "a100", CapacityGPUs: 8,
			Projects: []store.ProjectUsage{a1, {ProjectID: id("A2"), DepartmentID: dept("A"), NonPreemptible: 1, Deserved: 2}, b1}}}})
	}
	return w
}

func recordUsage(t testing.TB, st *store.Store, u store.UsageSample) {
	t.Helper()
	recorded, err := st.RecordUsageSample(context.Background(), u)
	if err != nil || !recorded {
		t.Fatalf("recording the sample of %s: recorded %v, %v", u.At, recorded, err)
	}
}

// window is the query of a metrics route over the history's two hours in two samples.
func window(metricTypes string, extra ...string) string {
	v := url.Values{"metricType": {metricTypes}, "start": {usageStart.Format(time.RFC3339)},
		"end": {usageStart.Add(2 * time.Hour).Format(time.RFC3339)}, "numberOfSamples": {"2"}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return "?" + v.Encode()
}

// measurement is Run:ai's MeasurementResponse as the tests compare it.
type measurement struct {
	Type   string            `json:"type"`
	Labels map[string]string `json:"labels,omitempty"`
	Values []metricValue     `json:"values"`
	Groups []group           `json:"groups,omitempty"`
}

type metricValue struct {
	Value     string    `json:"value"`
	Timestamp time.Time `json:"timestamp"`
}

type group struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type metricsAnswer struct {
	Measurements []measurement `json:"measurements"`
}

// hourly is a measurement's values at the history's two hours.
func hourly(first, second string) []metricValue {
	return []metricValue{{Value: first, Timestamp: usageStart}, {Value: second, Timestamp: usageStart.Add(time.Hour)}}
}

// clusterUUID is the installation's one cluster's id, as /api/v1/clusters answers it.
func clusterUUID(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	var list []struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal(send(t, srv, "GET", "/api/v1/clusters", "", 200).body, &list); err != nil || len(list) != 1 {
		t.Fatalf("the clusters: %v %+v", err, list)
	}
	return list[0].UUID
}
