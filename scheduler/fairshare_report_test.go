package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var shareApprox = cmpopts.EquateApprox(0, 1e-9)

func claim(deserved, limit, weight int64, demand float64) FairShareClaim {
	return FairShareClaim{Quota: Quota{Deserved: deserved, Limit: limit, OverQuotaWeight: weight}, Demand: demand}
}

func TestS11_FairShare_DividesAPool(t *testing.T) {
	for _, c := range []struct {
		name     string
		capacity float64
		claims   []FairShareClaim
		want     []float64
	}{
		{"deserved first, then the surplus by over-quota weight", 6,
			[]FairShareClaim{claim(1, NoLimit, 1, 5), claim(1, NoLimit, 3, 5)},
			[]float64{2, 4}},
		{"deserved quotas larger than the pool are served in proportion to them", 2,
			[]FairShareClaim{claim(2, NoLimit, 1, 10), claim(6, NoLimit, 1, 10)},
			[]float64{0.5, 1.5}},
		{"a share never exceeds demand or limit; what one cannot take goes to the others", 10,
			[]FairShareClaim{claim(2, NoLimit, 1, 3), claim(2, 6, 1, 20), claim(0, NoLimit, 1, 100)},
			[]float64{3, 4.5, 2.5}},
		{"no demand, no share, even with a deserved quota", 8,
			[]FairShareClaim{claim(4, NoLimit, 1, 0), claim(0, NoLimit, 1, 8)},
			[]float64{0, 8}},
		{"weight zero gets surplus only when nobody weighted wants it", 3,
			[]FairShareClaim{claim(0, NoLimit, 0, 2), claim(0, NoLimit, 1, 2)},
			[]float64{1, 2}},
		{"weight zero units share what is left equally", 5,
			[]FairShareClaim{claim(0, NoLimit, 0, 4), claim(0, NoLimit, 0, 1), claim(0, NoLimit, 0, 4)},
			[]float64{2, 1, 2}},
		{"spare GPUs nobody asks for stay unshared", 10,
			[]FairShareClaim{claim(1, NoLimit, 1, 2), claim(0, NoLimit, 2, 3)},
			[]float64{2, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(c.want, FairShares(c.capacity, c.claims), shareApprox); d != "" {
				t.Errorf("shares (-want +got):\n%s", d)
			}
		})
	}
}

// TestS11_FairShare_InTheCyclesReport: the report gives each department its share of the pool
// and each project its share of its department's; a project holding the whole pool on borrowed
// GPUs has a fair share of half of it when another, as deserving, waits.
func TestS11_FairShare_InTheCyclesReport(t *testing.T) {
	// One 4-GPU node and a second that is not ready (its GPUs are no one's share). Department d1
	// (deserved 2) holds a and b, d2 (deserved 0) holds c; no project deserves any. Project a
	// runs 4 borrowed GPUs; b and c wait with two 1-GPU workloads each.
	s := snap().node(node("n1").gpus(4), node("n2").gpus(8).notReady()).
		dept("d1", 2, NoLimit).dept("d2", 0, NoLimit).
		project(project("a", 0).dept("d1"), project("b", 0).dept("d1"), project("c", 0).dept("d2")).
		wl(wl("a1").in("a").gpus(4).on(0, "n1"),
			wl("b1").in("b"), wl("b2").in("b"), wl("c1").in("c"), wl("c2").in("c")).
		build()
	plan := s.Plan()
	// d1 deserves 2 of 4 and wants 6: it gets 2, then 1 of the surplus by equal weight; d2 wants
	// 2 and gets the other 1. In d1, a and b have equal weights and both want more than half.
	fairShares := func(rows []QueueStatus) map[string]float64 {
		out := map[string]float64{}
		for _, r := range rows {
			out[r.Name+"/"+r.NodePool] = r.FairShare
		}
		return out
	}
	if d := cmp.Diff(map[string]float64{"a/default": 1.5, "b/default": 1.5, "c/default": 1}, fairShares(plan.Projects), shareApprox); d != "" {
		t.Errorf("projects' fair shares (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]float64{"d1/default": 3, "d2/default": 1}, fairShares(plan.Departments), shareApprox); d != "" {
		t.Errorf("departments' fair shares (-want +got):\n%s", d)
	}
	if got := plan.NodePools[0].ReadyGPUs; got != 4 {
		t.Errorf("ready GPUs of the pool = %d, want 4", got)
	}
}

// BenchmarkFairShares_1000ProjectsIn20Departments10Pools is what the report's fair shares
// compute per cycle at that scale: per pool, the departments' shares, then each department's
// projects' shares.
func BenchmarkFairShares_1000ProjectsIn20Departments10Pools(b *testing.B) {
	depts := make([]FairShareClaim, 20)
	projects := make([]FairShareClaim, 50)
	for i := range depts {
		depts[i] = claim(int64(50+i), NoLimit, 2, float64(100+10*i))
	}
	for i := range projects {
		projects[i] = claim(int64(1+i%4), NoLimit, int64(i%3), float64(i%9))
	}
	b.ReportAllocs()
	for b.Loop() {
		for range 10 {
			for _, share := range FairShares(1000, depts) {
				FairShares(share, projects)
			}
		}
	}
}
