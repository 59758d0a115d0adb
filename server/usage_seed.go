package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
)

// seedDeadline bounds the reads of the usage history a new leader seeds S28's account from.
const seedDeadline = 30 * time.Second

// seedUsage gives the scheduler, at the start of a term, an account of past use (S28) read from
// the usage history, so that a new leader orders projects as the previous one did. Without a
// history (it cannot be read) the loop starts from an empty account, as on a first start.
func seedUsage(term context.Context, st *store.Store, sched *kube.Scheduler, interval time.Duration, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(term, seedDeadline)
	defer cancel()
	settings, err := loadSettings(ctx, st)
	if err != nil {
		log.Warn("time-based fair share starts without past use: the settings could not be read", "err", err)
		return
	}
	u, err := usageFromHistory(ctx, st, settings.NodePools, settings.Projects, time.Now(), interval)
	if err != nil {
		log.Warn("time-based fair share starts without past use: the usage history could not be read", "err", err)
		return
	}
	sched.SeedUsage(u)
}

// usageFromHistory makes the account of each pool's window before now from the usage history:
// per pool, the GPUs its projects held and its capacity, in steps of about a 64th of its
// window (whole hours when that is an hour or more, so that the hourly roll-up serves them;
// else whole recording intervals).
func usageFromHistory(ctx context.Context, st *store.Store, pools []scheduler.NodePool, projects []scheduler.Project, now time.Time, interval time.Duration) (*scheduler.UsageDecay, error) {
	if interval <= 0 {
		interval = DefaultUsageInterval
	}
	u := scheduler.NewUsageDecay(pools)
	names := make(map[uuid.UUID]string, len(projects))
	for _, p := range projects {
		if id, err := uuid.Parse(p.ID); err == nil {
			names[id] = p.Name
		}
	}
	byWindow := map[time.Duration][]string{}
	for _, p := range pools {
		w := p.TimeBasedFairness.Window
		if w <= 0 {
			w = scheduler.DefaultFairnessWindow
		}
		byWindow[w] = append(byWindow[w], p.Name)
	}
	for window, poolNames := range byWindow {
		from, step := now.Add(-window), window/64
		if step >= time.Hour {
			step, from = step.Truncate(time.Hour), from.Truncate(time.Hour)
		} else {
			step = max((step+interval-1)/interval, 1) * interval
			from = from.Truncate(interval)
		}
		points, capacity, err := st.UsageSeries(ctx, store.UsageQuery{From: from, To: now, Step: step, NodePools: poolNames})
		if err != nil {
			return nil, err
		}
		end := func(at time.Time) time.Time { return minTime(at.Add(step), now) } // the last step ends now
		for _, c := range capacity {
			u.AddCapacity(c.NodePool, c.At, end(c.At), c.GPUs*c.RecordedSeconds)
		}
		for _, p := range points {
			if name, ok := names[p.ProjectID]; ok {
				u.AddUsage(p.NodePool, name, p.At, end(p.At), (p.NonPreemptible+p.Preemptible+p.Borrowed)*p.RecordedSeconds)
			}
		}
	}
	return u, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
