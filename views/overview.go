package views

import (
	"context"
	"fmt"
	"net/url"

	"github.com/arbiterhq/arbiter/internal/english"
	"github.com/arbiterhq/arbiter/internal/routenames"
)

// OverviewPage is the Overview, the landing page after sign-in.
type OverviewPage struct {
	Page
	Live OverviewLive
}

// OverviewLive is the Overview's live region: every figure on the page, over what the caller
// may read. It is also the fragment the page polls.
type OverviewLive struct {
	Connected                     bool // a scheduler reports live status; false: zeros and a sentence
	Nodes, ReadyNodes             int
	GPUs, AllocatedGPUs, FreeGPUs int
	Running                       int
	Waiting                       WaitingCounts
	Preemptions, Reclaims         int // in the last 24 hours
	Pools                         []NodePool
	Projects                      []ProjectBar
	MoreProjects                  bool            // more projects than the page shows
	WaitingReasons                []WaitingReason // the most common first
	// Usage is the place of the charts of allocation over time per node pool: inside the live
	// region, where it reads, but kept as it is when the region refreshes (hx-preserve), so
	// the charts are drawn once.
	Usage UsageChartsPanel
}

// WaitingCounts is how many workloads wait to run, and in which phase: pending, preempted and
// waiting to come back, suspended by Arbiter until admitted.
type WaitingCounts struct {
	Total, Pending, Preempted, Suspended int
}

// WaitingReason is how many workloads wait for one reason ("" when the scheduler has given
// none yet), and whose.
type WaitingReason struct {
	Reason       string
	Count        int
	Projects     []ProjectCount // the projects whose work waits for it, the most waiting first
	MoreProjects int            // projects beyond those named
}

// ProjectCount is how many of a project's workloads wait for one reason.
type ProjectCount struct {
	Project string
	Count   int
}

// ProjectBar is a project's deserved GPUs against what it has allocated, over all its pools.
type ProjectBar struct {
	ID             string // the project's id: its name links its page
	Name           string
	Deserved       int
	Allocated      int
	Borrowed       int // allocated beyond the deserved quota
	NonPreemptible int // allocated to non-preemptible workloads (within the quota)
}

// BarSegment is one shaded part of a bar, in the SVG's units.
type BarSegment struct {
	Class string
	X, W  int
}

// barWidth is the width of a bar in the SVG's units (the SVG scales with its column).
const barWidth = 400

// Scale is the GPUs the full width of a project bar stands for: the largest deserved or
// allocated figure, so the bars compare with one another.
func (m OverviewLive) Scale() int {
	s := 1
	for _, b := range m.Projects {
		s = max(s, b.Deserved, b.Allocated)
	}
	return s
}

func scaled(n, scale int) int { return n * barWidth / max(scale, 1) }

// Segments are the bar's shaded parts, left to right: non-preemptible, other in-quota, borrowed.
func (b ProjectBar) Segments(scale int) []BarSegment {
	inQuota := max(b.Allocated-b.Borrowed, 0)
	np := min(b.NonPreemptible, inQuota)
	var out []BarSegment
	x := 0
	for _, p := range []struct {
		class string
		n     int
	}{{"seg-nonpreemptible", np}, {"seg-inquota", inQuota - np}, {"seg-borrowed", b.Borrowed}} {
		if p.n <= 0 {
			continue
		}
		w := scaled(p.n, scale)
		out = append(out, BarSegment{Class: p.class, X: x, W: w})
		x += w
	}
	return out
}

// DeservedX is where the bar's deserved-quota mark stands.
func (b ProjectBar) DeservedX(scale int) int { return min(scaled(b.Deserved, scale), barWidth-1) }

// Label says the bar in words, for screen readers and on hover.
func (b ProjectBar) Label() string {
	return fmt.Sprintf("%s: %d of %d deserved GPUs allocated, %s; %d non-preemptible",
		b.Name, b.Allocated, b.Deserved, b.QuotaWords(), min(b.NonPreemptible, max(b.Allocated-b.Borrowed, 0)))
}

// QuotaWords says where the project stands against its deserved quota: what it borrows beyond
// it (summed over its pools, as the scheduler counts it) is how far it is over quota. Quotas
// are per node pool, so what it borrows in one pool can differ from how far its total is over
// its total ("9 of 10 deserved" and yet borrowing in one pool): then it says where it borrows
// rather than "over quota by" a number its total does not show.
func (b ProjectBar) QuotaWords() string {
	switch {
	case b.Borrowed == 0:
		return "within quota"
	case b.Allocated-b.Deserved == b.Borrowed:
		return "over quota by " + english.Plural(b.Borrowed, "GPU")
	}
	return "borrows " + english.Plural(b.Borrowed, "GPU") + " beyond its deserved quota in some node pools"
}

// PoolUsedWidth is the allocated part of a pool's bar.
func PoolUsedWidth(s NodePoolStatus) int {
	if s.GPUs == 0 {
		return 0
	}
	return scaled(min(s.AllocatedGPUs, s.GPUs), s.GPUs)
}

// PoolLabel says a pool's allocation in words.
func PoolLabel(p NodePool) string {
	return fmt.Sprintf("%s: %d of %d GPUs allocated", p.Name, p.Status.AllocatedGPUs, p.Status.GPUs)
}

// reasonWords are the scheduler's waiting reasons (S23) in a few plain words; the page shows the
// code beside them, as the Workloads table does, so the two can be matched.
var reasonWords = map[string]string{
	"":                        "No reason given yet",
	"GangIncomplete":          "Not all of its gang's pods exist yet",
	"NoProject":               "Its namespace belongs to no project",
	"OverLimit":               "The project is at its GPU limit",
	"NonPreemptibleOverQuota": "Non-preemptible work beyond the project's deserved quota",
	"InsufficientCapacity":    "Not enough free GPUs",
	"NoMatchingNodes":         "No node matches what it asks for",
	"WaitingForEvictions":     "Preempted work is releasing GPUs for it",
	"BehindStrictHead":        "Behind the head of a strict queue",
	"TopologyUnsatisfiable":   "Not enough free GPUs in the one rack (or block) it requires",
}

// ReasonText is a waiting reason as the page says it.
func ReasonText(reason string) string {
	if w, ok := reasonWords[reason]; ok {
		return w
	}
	if r := []rune(reason); len(r) > 64 { // a code the page does not know: bounded
		return string(r[:63]) + "…"
	}
	return reason
}

// reasonParam is a reason as the Workloads view's filter takes it: "none" for no reason yet.
func reasonParam(reason string) string {
	if reason == "" {
		return "none"
	}
	return reason
}

// WorkloadsFiltered is the Workloads view filtered by the given parameter names and values
// (docs/console.md lists them): the Overview links each figure to the workloads it counts.
func WorkloadsFiltered(ctx context.Context, nameValues ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(nameValues); i += 2 {
		v.Set(nameValues[i], nameValues[i+1])
	}
	return URL(ctx, routenames.Workloads) + "?" + v.Encode()
}

// listComma is the comma after item i of n in a list written out.
func listComma(i, n int) string {
	if i < n-1 {
		return ","
	}
	return ""
}

// WaitingNote says which phases the waiting workloads are in, when any is not Pending.
func (w WaitingCounts) Note() string {
	if w.Preempted == 0 && w.Suspended == 0 {
		return ""
	}
	s := itoa(w.Pending) + " pending"
	if w.Preempted > 0 {
		s += ", " + itoa(w.Preempted) + " preempted"
	}
	if w.Suspended > 0 {
		s += ", " + itoa(w.Suspended) + " suspended"
	}
	return s
}
