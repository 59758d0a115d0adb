package web

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/labstack/echo/v4"
)

// FuzzMetricsQuery checks that any query of a metrics route is either read into a period that
// ends after it starts, at most maxUsagePeriod long, cut into 1 to maxSamples buckets of a
// served metric type, or refused with a 4xx sentence naming one of the route's parameters.
func FuzzMetricsQuery(f *testing.F) {
	for _, s := range []string{
		"metricType=GPU_ALLOCATION&start=2026-11-01T00:00:00Z&end=2026-11-02T00:00:00Z",
		"metricType=GPU_ALLOCATION,GPU_QUOTA&start=2026-11-01T00:00:00Z&end=2026-11-02T00:00:00Z&numberOfSamples=1000",
		"metricType=GPU_QUOTA&metricType=GPU_ALLOCATION&start=2026-11-01T00:00:00.5Z&end=2026-11-01T00:00:01Z&numberOfSamples=0",
		"metricType=CPU_QUOTA_MILLICORES&start=2026-11-01T00:00:00Z&end=2026-11-02T00:00:00Z",
		"metricType=TOTAL_GPU&start=2026-11-02T00:00:00Z&end=2026-11-01T00:00:00Z",
		"metricType=,&start=x&end=y", "metricType=GPU_ALLOCATION&start=0001-01-01T00:00:00Z&end=9999-12-31T23:59:59Z",
		"metricType=GPU_ALLOCATION&start=2026-11-01T00:00:00Z&end=2026-11-02T00:00:00Z&numberOfSamples=-1",
		"metricType=GPU_ALLOCATION&start=2026-11-01T00:00:00Z&end=2026-11-02T00:00:00Z&numberOfSamples=99999999999999999999",
		"metricType=GPU_ALLOCATION&start=2026-11-01T00:00:00+14:00&end=2026-11-01T00:00:00-12:00", "",
	} {
		f.Add(s)
	}
	fields := []string{"metricType", "start", "end", "numberOfSamples"}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return // not a query string a client can send
		}
		for _, types := range []metricTypes{projectMetricTypes, departmentMetricTypes, clusterMetricTypes} {
			got, err := types.parse(v)
			if err == nil {
				if len(got) == 0 || slices.ContainsFunc(got, func(t string) bool { return !slices.Contains(types.served, t) }) {
					t.Fatalf("query %q: read metric types %v, want served ones", raw, got)
				}
			} else {
				checkRefusal(t, raw, err)
				if !slices.Contains(fields, fieldOf(err)) {
					t.Fatalf("query %q: refusal %q names field %q", raw, err, fieldOf(err))
				}
			}
		}
		w, err := parseUsageWindow(v)
		if err != nil {
			checkRefusal(t, raw, err)
			if !slices.Contains(fields, fieldOf(err)) {
				t.Fatalf("query %q: refusal %q names field %q", raw, err, fieldOf(err))
			}
			return
		}
		from, step := w.Buckets()
		if !w.End.After(w.Start) || w.End.Sub(w.Start) > maxUsagePeriod || w.Samples < 1 || w.Samples > maxSamples ||
			step <= 0 || from.After(w.Start) || int64(w.End.Sub(from)/step) > maxSamples+1 {
			t.Fatalf("query %q: read %+v, buckets from %s of %s", raw, w, from, step)
		}
	})
}

// FuzzUsageFilter checks Arbiter's own usage query the same way: a period, a positive step
// with at most the store's bound of buckets or a refusal, names that are not empty, ids parsed.
func FuzzUsageFilter(f *testing.F) {
	for _, s := range []string{
		"from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z",
		"from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&step=1h&nodePool=a100&nodePool=h100",
		"from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&step=-5m",
		"from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&step=1ns&projectId=6723b9d7-73d1-5e4c-a494-d8fdeddc541c",
		"from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&projectId=x&departmentId={6723b9d7-73d1-5e4c-a494-d8fdeddc541c}",
		"from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&nodePool=", "to=2026-11-02T00:00:00Z",
	} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		got, err := parseUsageFilter(v, true, store.DefaultUsageRetention, now)
		if err != nil {
			checkRefusal(t, raw, err)
			return
		}
		if !got.to.After(got.from) || got.step <= 0 || slices.Contains(got.pools, "") {
			t.Fatalf("query %q: read %+v", raw, got)
		}
		if len(v["projectId"]) != len(got.projects) {
			t.Fatalf("query %q: read projects %v", raw, got.projects)
		}
	})
}

// FuzzReportRequest checks that any body of a report's creation is refused with a 4xx
// sentence or read into a named report over a period, with a grouping of Run:ai's enumeration
// and filters of the three kinds a report takes.
func FuzzReportRequest(f *testing.F) {
	for _, s := range []string{
		`{"name":"2023 GPU report","start":"2023-06-07T09:09:18.211Z","end":"2023-06-07T12:09:18.211Z"}`,
		`{"name":"n","start":"2023-06-07T09:09:18Z","end":"2023-06-08T09:09:18Z","groupBy":"Department","filterBy":["projectName==a","departmentName==b==c"]}`,
		`{"name":"n","start":"2023-06-07T09:09:18Z","end":"2023-06-08T09:09:18Z","groupBy":null,"filterBy":null}`,
		`{"name":"n","start":"2023-06-07T09:09:18Z","end":"2023-06-08T09:09:18Z","groupBy":"Category"}`,
		`{"name":"n","start":"2023-06-07T09:09:18Z","end":"2023-06-08T09:09:18Z","filterBy":["name==x"]}`,
		`{"name":" ","start":"2023-06-07T09:09:18Z","end":"2023-06-08T09:09:18Z"}`, `{"name":"n","start":1,"end":2}`,
		`{"name":"n","start":"2023-06-08T09:09:18Z","end":"2023-06-07T09:09:18Z"}`, `{}`, `[]`, `{"name":"a\u0000"}`,
	} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		var r reportRequest
		err := decodeJSON(jsonContext(e, http.MethodPost, body), &r, reportRequestFields...)
		var s reportSpec
		if err == nil {
			s, err = checkReportRequest(r)
		}
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		if s.name == "" || len(s.name) > 200 || !s.end.After(s.start) || s.end.Sub(s.start) > maxUsagePeriod ||
			(s.groupBy != nil && !slices.Contains(reportGroupings, *s.groupBy)) ||
			len(s.projectNames)+len(s.departmentNames)+len(s.clusterIDs) != len(s.filterBy) || !cleanText(s.name) {
			t.Fatalf("body %q: read %+v", body, s)
		}
	})
}
