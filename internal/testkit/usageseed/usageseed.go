// Package usageseed records a usage history for tests and benchmarks through the store's own
// writer (store.RecordUsageSample), rolled up and pruned as the leader leaves it: samples every
// RawInterval over the last RawHours, hourly samples before that, so that a 30-day chart reads
// what it would read in production (raw rows for the last two days and the hour not yet
// rolled up, hourly and daily rows before).
package usageseed

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// Spec is the history to record: Projects' figures in one node pool, varied over the day (a
// wave per project, so that charts have a shape and projects differ), ending at End.
type Spec struct {
	End         time.Time
	Days        int
	RawHours    int           // the last hours recorded every RawInterval (48 in production)
	RawInterval time.Duration // 30 s in production
	NodePool    string
	Capacity    float64
	Projects    []Project
}

// Project is one project's figures at the top of its wave: what it holds in the quiet hours
// is less, what it asks for is more, and every PreemptedEvery-th sample it loses a workload.
type Project struct {
	ID, DepartmentID            uuid.UUID
	NonPreemptible, Preemptible float64
	Borrowed, Pending           float64
	Deserved, FairShare         float64
	PreemptedEvery              int // 0: never
}

// Record writes the history and rolls it up; it answers how many samples it wrote.
func Record(ctx context.Context, st *store.Store, s Spec) (int, error) {
	// Raw samples up to End itself, so that the hour not yet rolled up is read raw, as it is
	// in production.
	end := s.End.UTC()
	hour := end.Truncate(time.Hour)
	rawFrom := hour.Add(-time.Duration(s.RawHours) * time.Hour)
	n := 0
	for at := hour.Add(-time.Duration(s.Days) * 24 * time.Hour); at.Before(end); {
		interval := time.Hour
		if !at.Before(rawFrom) {
			interval = s.RawInterval
		}
		if _, err := st.RecordUsageSample(ctx, sample(s, at, interval, n)); err != nil {
			return n, err
		}
		n++
		at = at.Add(interval)
	}
	if _, err := st.RollUpUsage(ctx, end, 0, 100_000); err != nil {
		return n, err
	}
	_, err := st.PruneUsage(ctx, end, store.DefaultUsageRetention, 10_000_000)
	return n, err
}

func sample(s Spec, at time.Time, interval time.Duration, n int) store.UsageSample {
	hours := float64(at.Unix()) / 3600
	pool := store.PoolUsage{NodePool: s.NodePool, CapacityGPUs: s.Capacity}
	for i, p := range s.Projects {
		wave := 0.5 + 0.5*math.Sin(2*math.Pi*hours/24+float64(i))
		u := store.ProjectUsage{ProjectID: p.ID, DepartmentID: p.DepartmentID,
			NonPreemptible: p.NonPreemptible, Preemptible: round(p.Preemptible * wave), Borrowed: round(p.Borrowed * wave),
			Pending: round(p.Pending * (1 - wave)), Deserved: p.Deserved, FairShare: p.FairShare}
		if p.PreemptedEvery > 0 && (n+i)%p.PreemptedEvery == 0 {
			u.Preemptions = 1
		}
		pool.Projects = append(pool.Projects, u)
	}
	return store.UsageSample{At: at, Interval: interval, Pools: []store.PoolUsage{pool}}
}

// round keeps whole GPUs, as allocations are.
func round(v float64) float64 { return math.Round(v) }

// Organization creates departments dept-00 … with projects proj-0000 … (projects in all,
// spread over the departments in turn) through the store, and answers their figures for a
// Spec: every project deserves 1 GPU; some run non-preemptible work, some borrow, all ask for
// more in their quiet hours, and some are preempted now and then.
func Organization(ctx context.Context, st *store.Store, departments, projects int) ([]Project, error) {
	by := store.Actor{Subject: "usageseed", SubjectType: "system"}
	text := func(s string) store.Optional[string] { return store.Optional[string]{Set: true, Value: &s} }
	depts := make([]uuid.UUID, departments)
	for i := range depts {
		d, err := st.CreateDepartment(ctx, store.DepartmentUpdate{Name: text(fmt.Sprintf("dept-%02d", i))}, by)
		if err != nil {
			return nil, err
		}
		depts[i] = d.ID
	}
	out := make([]Project, projects)
	for i := range out {
		dept := depts[i%departments]
		p, err := st.CreateProject(ctx, store.ProjectUpdate{Name: text(fmt.Sprintf("proj-%04d", i)),
			DepartmentID: store.Optional[uuid.UUID]{Set: true, Value: &dept}}, by)
		if err != nil {
			return nil, err
		}
		out[i] = Project{ID: p.ID, DepartmentID: dept, Preemptible: 2, Pending: 1, Deserved: 1, FairShare: 1.5}
		if i%3 == 0 {
			out[i].NonPreemptible = 1
		}
		if i%5 == 0 {
			out[i].Borrowed = 2
		}
		if i%7 == 0 {
			out[i].PreemptedEvery = 37
		}
	}
	return out, nil
}
