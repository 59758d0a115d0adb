package bench

import (
	"math"
	"testing"
	"time"
)

func TestBindQuantileInterpolatesWithinABucket(t *testing.T) {
	line := `apiserver_request_duration_seconds_bucket{component="apiserver",resource="pods",subresource="binding",verb="POST",le="0.1"} 40`
	name, labels, value, ok := metricLine(line)
	if !ok || name != "apiserver_request_duration_seconds_bucket" || labels["le"] != "0.1" || labels["subresource"] != "binding" || value != 40 {
		t.Fatalf("metricLine = %q %v %v %v", name, labels, value, ok)
	}
	before := apiRequests{bindSeconds: map[float64]float64{0.05: 10, 0.1: 20, 0.2: 30, math.Inf(1): 30}}
	after := apiRequests{bindSeconds: map[float64]float64{0.05: 10, 0.1: 60, 0.2: 130, math.Inf(1): 130}}
	// 100 binds between the readings: 40 in (0.05, 0.1], 60 in (0.1, 0.2]. The median is the
	// 50th: the 10th of the 60 in the second bucket, a sixth of the way into it.
	if got, want := after.bindQuantile(before, 0.5), 116666666*time.Nanosecond; got.Round(time.Millisecond) != want.Round(time.Millisecond) {
		t.Errorf("p50 = %s, want %s", got, want)
	}
	if got := after.bindQuantile(after, 0.5); got != 0 {
		t.Errorf("p50 with no binds between the readings = %s, want 0", got)
	}
}
