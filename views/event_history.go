package views

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// SchedulingEventsView is the Event history's second tab: what the scheduler and people did
// to workloads (Preempted, Reclaimed, Suspended, Resumed, PriorityChanged, PreemptibilityChanged), filterable by kind,
// project and workload, newest first.
type SchedulingEventsView struct {
	Kinds                   []string // the kinds one may filter by
	Kind, Project, Workload string   // the filters applied
	Projects                []string // the projects the caller may filter by
	Events                  []SchedulingEventRow
	NextHref, PrevHref      string
}

// SchedulingEventRow is one scheduling event with the workloads it names.
type SchedulingEventRow struct {
	At        time.Time
	Kind      string
	Rule      string
	Project   string
	Workload  WorkloadLink
	Preemptor *WorkloadLink
	Message   string
	Actor     string
}

// ChangeLines shows an audit row's changes one per line as "field: from → to" (a value set
// where there was none reads "field: → to"); other shapes are shown as their JSON.
func ChangeLines(m map[string]any) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if c, ok := v.(map[string]any); ok && len(c) == 2 && hasKeys(c, "from", "to") {
			out = append(out, fmt.Sprintf("%s: %s → %s", k, changeValue(c["from"]), changeValue(c["to"])))
			continue
		}
		out = append(out, k+": "+changeValue(v))
	}
	return out
}

func hasKeys(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// changeValue is one side of a change as people read it: text as is, nothing as "—", numbers
// and lists compactly.
func changeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case string:
		if x == "" {
			return `""`
		}
		return x
	case float64:
		return fmt.Sprint(x)
	case bool:
		return fmt.Sprint(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ShortID is an id's first eight characters and an ellipsis (the whole id is in the title
// beside it), so that a narrow column stays readable.
func ShortID(id string) string {
	if len(id) <= 9 {
		return id
	}
	return id[:8] + "…"
}
