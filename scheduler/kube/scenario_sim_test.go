package kube

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	ks "github.com/arbiterhq/arbiter/internal/testkit/kueuescenario"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// Kueue's scalability scenario as bench/kueue_scenario_test.go maps it onto Arbiter (scaled by
// ks.Factor; a department per cohort, a project per ClusterQueue, open and newest first; 15
// nodes of 40 GPUs), played through the real scheduling loop and cache on the simulated
// control plane (sim_cluster_test.go). It separates what Arbiter's rules make of the scenario
// from what the real control plane adds: docs/performance.md, "Kueue's scenario end to end".

// scenarioSimVariant is one way of playing the scenario.
type scenarioSimVariant struct {
	name    string
	timings simTimings
	// preempt: the projects preempt and reclaim (S16, S17, S30) as the mapping says; without
	// it their pending work waits longer than the round lasts before it may (S27).
	preempt bool
}

var scenarioSimVariants = []scenarioSimVariant{
	// the mapping, on the simulation's control plane: the Job controller reacts in 15–45 ms,
	// kwok starts a bound pod in 100–300 ms (the real one's bound → Running is 0.12 s on
	// average in the scenario's rounds, and it sees a pod end 0.08 s late at the median)
	{"mapped", simDefaultTimings, true},
	// the same with a control plane that answers in about a millisecond
	{"instant", simTimings{controllerLag: 2 * time.Millisecond, startDelay: 2 * time.Millisecond}, true},
	// the mapping without preemption or reclaim (not Kueue's scenario: what they cost or gain)
	{"no-preemption", simDefaultTimings, false},
}

// scenarioSimSettings is the scenario's organization as the benchmark creates it: a department
// per cohort (quota and limit the cohort's), a project per ClusterQueue (deserved its nominal
// quota, limit nominal + borrowing limit, preempting the newest first, open).
func scenarioSimSettings(preempt bool) *Settings {
	s := simSettings()
	s.NodePools = []scheduler.NodePool{{Name: "bench", LabelKey: devcluster.LabelNodePool, LabelValue: "bench"}}
	s.Departments, s.Projects, s.Topologies = nil, nil, nil
	s.NamespaceProject = map[string]string{}
	policy := scheduler.Policy{PreemptionOrder: scheduler.NewestFirst, PreemptionMode: scheduler.Terminate, Queueing: scheduler.BestEffort}
	if !preempt {
		policy.PreemptionDelaySeconds = 3600
	}
	for c := range ks.Cohorts {
		dept := fmt.Sprintf("c%d", c)
		s.Departments = append(s.Departments, scheduler.Department{Name: dept,
			Quotas: map[string]scheduler.Quota{"bench": {Deserved: ks.CohortQuota, Limit: ks.CohortQuota, OverQuotaWeight: 2}}})
		for q := range ks.Queues {
			name := fmt.Sprintf("a-c%d-q%d", c, q)
			s.Projects = append(s.Projects, scheduler.Project{Name: name, Department: dept, Policy: policy, PriorityPolicy: scheduler.Open,
				Quotas: map[string]scheduler.Quota{"bench": {Deserved: ks.Nominal, Limit: ks.Nominal + ks.Borrow, OverQuotaWeight: 2}}})
			s.NamespaceProject[name] = name
		}
	}
	return s
}

func scenarioSimNodes() []*corev1.Node {
	pool := devcluster.Pool{Name: "bench", Nodes: ks.Nodes, GPUs: ks.NodeGPUs}
	var nodes []*corev1.Node
	for i := range pool.Nodes {
		n := pool.Node(i)
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		nodes = append(nodes, n)
	}
	return nodes
}

// scenarioSimRound is one simulated round: its wall time from the first create to the last
// Job complete (zero if it did not finish within ten minutes), and the evictions.
type scenarioSimRound struct {
	wall      time.Duration
	evictions int
}

// runScenarioSim plays a round: each project's Jobs created as the benchmark creates them, at
// start + (i + 1) × the class's scaled interval.
func runScenarioSim(seed uint64, v scenarioSimVariant) scenarioSimRound {
	start := time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)
	c := newSimCluster(seed, start, scenarioSimSettings(v.preempt), scenarioSimNodes())
	c.timings = v.timings
	jobs := 0
	for q := range ks.Cohorts * ks.Queues {
		ns := fmt.Sprintf("a-c%d-q%d", q/ks.Queues, q%ks.Queues)
		for _, cl := range ks.Classes {
			count, interval, run := cl.Scaled()
			for i := range count {
				j := objects.Job(fmt.Sprintf("%s-%d", cl.Name, i), ns).GPUs(cl.GPUs).BackoffLimit(6).
					PodAnnotation(devcluster.AnnotationRunSeconds, strconv.Itoa(run)).
					SchedulerName("arbiter").Priority(cl.ArbiterPriority).Preemptible().Obj()
				c.after(time.Duration(i+1)*interval, func() { c.createJob(j) })
				jobs++
			}
		}
	}
	var r scenarioSimRound
	first := start.Add(ks.FirstCreate())
	complete := func() bool {
		done := 0
		for _, j := range c.jobs {
			if len(j.Status.Conditions) > 0 {
				done++
			}
		}
		return done == jobs
	}
	c.runUntil(start.Add(10*time.Minute), time.Minute, func() {}, func(res *Result) {
		if r.wall == 0 {
			r.evictions += len(res.Plan.Evictions)
			if complete() {
				r.wall = res.At.Sub(first)
			}
		}
	})
	return r
}

// BenchmarkKueueScenarioSimulated reports, for each variant, the simulated wall time (mean of
// two seeds), its ratio to the arrivals' bound (ks.Bounds), the usage that gives, and the
// evictions a round. The wall is counted to the cycle that first sees every Job complete.
func BenchmarkKueueScenarioSimulated(b *testing.B) {
	bounds := ks.Bound()
	for _, v := range scenarioSimVariants {
		b.Run(v.name, func(b *testing.B) {
			for range b.N {
				const seeds = 2
				var wall time.Duration
				evictions := 0
				for seed := uint64(1); seed <= seeds; seed++ {
					r := runScenarioSim(seed, v)
					if r.wall == 0 {
						b.Fatalf("%s, seed %d: the Jobs were not all complete after ten minutes", v.name, seed)
					}
					wall += r.wall
					evictions += r.evictions
				}
				wall /= seeds
				b.ReportMetric(wall.Seconds(), "wall-s")
				b.ReportMetric(wall.Seconds()/bounds.ArrivalBound.Seconds(), "x-arrival-bound")
				b.ReportMetric(100*bounds.Work/(ks.GPUs*wall.Seconds()), "usage-pct")
				b.ReportMetric(float64(evictions)/seeds, "evictions")
			}
		})
	}
}
