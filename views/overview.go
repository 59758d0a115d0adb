package views

import "fmt"

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
	Running, Pending              int
	Preemptions, Reclaims         int // in the last 24 hours
	Pools                         []NodePool
	Projects                      []ProjectBar
	MoreProjects                  bool // more projects than the page shows
	PendingReasons                []ReasonCount
}

// ReasonCount is how many pending workloads wait for one reason.
type ReasonCount struct {
	Reason string
	Count  int
}

// ProjectBar is a project's deserved GPUs against what it has allocated, over all its pools.
type ProjectBar struct {
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
	return fmt.Sprintf("%s: %d of %d deserved GPUs allocated; %d non-preemptible, %d borrowed",
		b.Name, b.Allocated, b.Deserved, min(b.NonPreemptible, max(b.Allocated-b.Borrowed, 0)), b.Borrowed)
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

// ReasonText is a pending reason as the page shows it.
func ReasonText(reason string) string {
	if reason == "" {
		return "No reason given yet"
	}
	return reason
}
