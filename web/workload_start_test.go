package web

import (
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/views"
)

// The Workloads table's Queue cell says how soon a waiting workload is expected to start, in
// the Age column's units; once the time has come it is due; without a time, what the estimate
// pass says.
func TestTheQueueCellSaysHowSoonAWorkloadStarts(t *testing.T) {
	now := time.Date(2026, 11, 28, 11, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	cases := []struct {
		name string
		w    views.Workload
		want string
	}{
		{"in seconds", views.Workload{EstimatedStartAt: at(40 * time.Second)}, "in 40s"},
		{"in minutes", views.Workload{EstimatedStartAt: at(25*time.Minute + 50*time.Second)}, "in 25m"},
		{"in hours, as Age counts them", views.Workload{EstimatedStartAt: at(69 * time.Minute)}, "in 1h"},
		{"in hours", views.Workload{EstimatedStartAt: at(5 * time.Hour)}, "in 5h"},
		{"in days", views.Workload{EstimatedStartAt: at(72 * time.Hour)}, "in 3d"},
		{"its time has come", views.Workload{EstimatedStartAt: at(-time.Minute)}, "due now"},
		{"not estimated yet", views.Workload{EstimateBasis: views.NoEstimateYetBasis}, "estimating"},
		{"cannot be told", views.Workload{EstimateBasis: "It needs 8 GPUs on one node; no node has 8."}, "unknown"},
	}
	for _, tc := range cases {
		if got := startIn(tc.w, now); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	w := views.Workload{EstimatedStartAt: at(25 * time.Minute), EstimateBasis: "When team/holder reaches its activeDeadlineSeconds."}
	if got, want := views.EstimateTitle(w), "Nov 28 11:25 UTC. When team/holder reaches its activeDeadlineSeconds."; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
}
