package web

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// UsageStore is the usage history (what the leader records every interval) and the
// consumption reports computed from it.
type UsageStore interface {
	UsageHistory
	UsageDays(ctx context.Context, from, to time.Time, pools []string, projects []uuid.UUID) ([]store.UsageDay, error)
	CreateUsageReport(ctx context.Context, n store.NewUsageReport, by store.Actor) (store.UsageReport, error)
	UsageReports(ctx context.Context, q listquery.Query) ([]store.UsageReport, *int, error)
	CountUsageReports(ctx context.Context, q listquery.Query) (int, error)
	UsageReport(ctx context.Context, id uuid.UUID) (store.UsageReport, error)
	UsageReportCSV(ctx context.Context, id uuid.UUID) (store.UsageReport, []byte, error)
	DeleteUsageReport(ctx context.Context, id uuid.UUID, by store.Actor) error
}

// errNoUsageHistory answers the usage routes of a server built without the usage store.
var errNoUsageHistory = &httpError{status: http.StatusServiceUnavailable, message: "this server keeps no usage history; the routes of usage over time are not available"}

// maxUsagePeriod bounds the period one request of usage over time may cover: a year and a
// day, so that a calendar year's report fits with its leap day.
const maxUsagePeriod = 366 * 24 * time.Hour

// Run:ai's numberOfSamples: from 0 to 1000, 20 when not given. Arbiter takes 0 as the default
// too (the document allows 0 and says nothing of what it means).
const (
	defaultSamples = 20
	maxSamples     = 1000
)

// usageWindow is a period and how many buckets it is cut into.
type usageWindow struct {
	Start, End time.Time
	Samples    int
}

// Buckets are the window cut into Samples buckets, aligned as alignBuckets aligns them.
func (w usageWindow) Buckets() (from time.Time, step time.Duration) {
	step = time.Duration(math.Ceil(float64(w.End.Sub(w.Start)) / float64(w.Samples)))
	return alignBuckets(w.Start, step)
}

// alignBuckets aligns buckets to the usage history's roll-ups, which alone reach back past the
// raw samples' retention: a step of a day or more becomes whole days from 00:00 UTC, a step of
// an hour or more whole hours from the hour (so a bucket may start before the period does and
// there may be fewer buckets than asked for); a shorter step is kept as it is.
func alignBuckets(from time.Time, step time.Duration) (time.Time, time.Duration) {
	for _, unit := range []time.Duration{24 * time.Hour, time.Hour} {
		if step >= unit {
			return from.Truncate(unit), (step + unit - 1) / unit * unit
		}
	}
	return from, step
}

// usageReach is one level of the usage history as a bucket width selects it: buckets finer
// than below are read from it (and the levels finer still), and it is kept for kept (0: forever).
type usageReach struct {
	below time.Duration
	kept  time.Duration
	rows  string
}

func usageReaches(keep store.UsageRetention) []usageReach {
	return []usageReach{{time.Hour, keep.Raw, "raw samples"}, {24 * time.Hour, keep.Hourly, "hourly rows"}, {math.MaxInt64, keep.Daily, "daily rows"}}
}

// checkReach refuses buckets the history no longer holds for the period's start: a step under
// an hour is read from the raw samples alone, a step of whole hours from the hourly rows, a
// step of days from the daily ones, each kept as long as its retention in keep. coarser gets
// the width of the next level's buckets (0: none) and says what to ask for instead.
func checkReach(field string, keep store.UsageRetention, from time.Time, step time.Duration, now time.Time, coarser func(time.Duration) string) error {
	levels := usageReaches(keep)
	for i, l := range levels {
		if step >= l.below {
			continue
		}
		if l.kept <= 0 || !from.Before(now.Add(-l.kept)) {
			return nil
		}
		next := time.Duration(0)
		if i+1 < len(levels) {
			next = l.below
		}
		return badField(field, "%s makes buckets of %s, read from the usage history's %s, which are kept %s, and the period starts before that; %s",
			field, step.Round(time.Second), l.rows, spokenDuration(l.kept), coarser(next))
	}
	return nil
}

// spokenDuration writes a retention as people say it: 48 hours, 90 days.
func spokenDuration(d time.Duration) string {
	if d%(24*time.Hour) == 0 && d >= 72*time.Hour {
		return strconv.Itoa(int(d/(24*time.Hour))) + " days"
	}
	return strconv.FormatFloat(d.Hours(), 'f', -1, 64) + " hours"
}

// parseTimeParam reads a required RFC 3339 time from the query or a body field.
func parseTimeParam(field, raw string) (time.Time, error) {
	if raw == "" {
		return time.Time{}, badField(field, "%s is required: give it as an RFC 3339 time such as 2026-11-01T00:00:00Z", field)
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return time.Time{}, badField(field, "%s %q is not an RFC 3339 time; write it as 2026-11-01T00:00:00Z", field, clipText(raw))
	}
	if t.Year() < 2000 || t.Year() > 9999 {
		return time.Time{}, badField(field, "%s %q is not a time Arbiter can have recorded; give a time after the year 2000", field, clipText(raw))
	}
	return t.UTC(), nil
}

// parsePeriod reads a period from two fields: the end after the start, at most maxUsagePeriod.
func parsePeriod(startField, startRaw, endField, endRaw string) (time.Time, time.Time, error) {
	start, err := parseTimeParam(startField, startRaw)
	if err != nil {
		return start, start, err
	}
	end, err := parseTimeParam(endField, endRaw)
	if err != nil {
		return start, end, err
	}
	if !end.After(start) {
		return start, end, badField(endField, "%s %s is not after %s %s; give a period that ends after it starts", endField, end.Format(time.RFC3339), startField, start.Format(time.RFC3339))
	}
	if end.Sub(start) > maxUsagePeriod {
		return start, end, badField(startField, "the period from %s to %s is %.0f days, over the %d days one request may cover; ask for a shorter period",
			startField, endField, end.Sub(start).Hours()/24, int(maxUsagePeriod.Hours()/24))
	}
	return start, end, nil
}

// parseUsageWindow reads Run:ai's start, end and numberOfSamples.
func parseUsageWindow(v url.Values) (usageWindow, error) {
	start, end, err := parsePeriod("start", v.Get("start"), "end", v.Get("end"))
	if err != nil {
		return usageWindow{}, err
	}
	w := usageWindow{Start: start, End: end, Samples: defaultSamples}
	if raw := v.Get("numberOfSamples"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 || n > maxSamples {
			return w, badField("numberOfSamples", "numberOfSamples %q must be a whole number from 0 to %d (0 and none mean %d)", clipText(raw), maxSamples, defaultSamples)
		}
		if n > 0 {
			w.Samples = n
		}
	}
	return w, nil
}

// metricTypes is one route's metricType enumeration: the types Arbiter answers, in the
// document's order, and the types it refuses, each with why.
type metricTypes struct {
	served   []string
	unserved map[string]string
}

// parse reads metricType: required, comma-joined (the document's explode: false) or repeated,
// each value once.
func (m metricTypes) parse(v url.Values) ([]string, error) {
	var out []string
	for _, raw := range v["metricType"] {
		for _, t := range strings.Split(raw, ",") {
			t = strings.TrimSpace(t)
			switch {
			case t == "":
				continue
			case slices.Contains(m.served, t):
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			case m.unserved[t] != "":
				return nil, badField("metricType", "metricType %s is not available from Arbiter: %s; ask for %s", t, m.unserved[t], strings.Join(m.served, " or "))
			default:
				return nil, badField("metricType", "metricType %q is not a metric type of this route; use %s", clipText(t), strings.Join(m.served, " or "))
			}
		}
	}
	if len(out) == 0 {
		return nil, badField("metricType", "metricType is required: name one or more of %s, joined by commas", strings.Join(m.served, ", "))
	}
	return out, nil
}

// Why the usage history cannot answer Run:ai's other metric types.
const (
	notRecordedCPU     = "the usage history records GPUs only, not CPU or memory"
	notRecordedDevices = "Arbiter does not read the GPUs' own telemetry (utilization, memory), only what the scheduler allocates"
)

// clipText shortens a caller's value before it is quoted back in a sentence (by runes: a cut
// never splits a character).
func clipText(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}

// usageStoreError turns the store's refusal of a query (a step under the recording interval,
// too many buckets) into one naming the parameter the caller sent.
func usageStoreError(err error, field string, hint string) error {
	var se *store.Error
	if errors.As(err, &se) && errors.Is(se.Kind, store.ErrInvalid) {
		return badField(field, "%s; %s", strings.TrimSuffix(se.Message, "."), hint)
	}
	return err
}

// figure formats a number of GPUs as Run:ai's string values: up to four decimals, no
// exponent, no trailing zeros.
func figure(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}
