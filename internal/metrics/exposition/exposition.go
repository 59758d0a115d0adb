// Package exposition reads what /metrics answers, for the tests that check Arbiter's metrics
// against what happened (the unit tests of internal/metrics and the end-to-end scrape).
package exposition

import (
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Families is a scrape: the metric families by name.
type Families map[string]*dto.MetricFamily

// Parse reads a scrape in the text exposition format.
func Parse(r io.Reader) (Families, error) {
	var p expfmt.TextParser
	return p.TextToMetricFamilies(r)
}

// Value sums the series of a metric whose labels include want: counters' and gauges' values,
// histograms' sample counts. A metric not exposed is 0.
func (f Families) Value(name string, want map[string]string) float64 {
	var sum float64
	for _, s := range f[name].GetMetric() {
		have := map[string]string{}
		for _, l := range s.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if have[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case s.Counter != nil:
			sum += s.GetCounter().GetValue()
		case s.Gauge != nil:
			sum += s.GetGauge().GetValue()
		case s.Histogram != nil:
			sum += float64(s.GetHistogram().GetSampleCount())
		}
	}
	return sum
}
