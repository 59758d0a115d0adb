// Kueue's own scalability harness (test/performance/scheduler in the Kueue module), read in
// the formats its runner writes and its checker reads: the scenario (generator.yaml) for the
// physical bound, the results (summary.yaml, minimalkueue.stats.yaml) and the limits
// (rangespec.yaml). The types mirror the module's (generator.Config, recorder.Summary,
// stats.CmdStats, checker.RangeSpec) so that Arbiter's go.mod need not require the runner's
// dependencies; they are read strictly, so that a field the module adds is an error here rather
// than a figure silently misread.

package bench

import (
	"encoding/csv"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// harnessScenario is the part of generator.yaml that fixes the work and the capacity.
type harnessScenario struct {
	Cohorts []struct {
		ClassName  string `json:"className"`
		Count      int    `json:"count"`
		QueuesSets []struct {
			ClassName           string `json:"className"`
			Count               int    `json:"count"`
			NominalQuota        string `json:"nominalQuota"`
			BorrowingLimit      string `json:"borrowingLimit"`
			ReclaimWithinCohort string `json:"reclaimWithinCohort"`
			WithinClusterQueue  string `json:"withinClusterQueue"`
			WorkloadsSets       []struct {
				Count              int `json:"count"`
				CreationIntervalMs int `json:"creationIntervalMs"`
				Workloads          []struct {
					ClassName string `json:"className"`
					RuntimeMs int    `json:"runtimeMs"`
					Priority  int32  `json:"priority"`
					Request   string `json:"request"`
					PodCount  int    `json:"podCount"`
				} `json:"workloads"`
			} `json:"workloadsSets"`
		} `json:"queuesSets"`
	} `json:"cohorts"`
}

// harnessBound is what a scenario asks of any scheduler.
type harnessBound struct {
	Workloads int
	// Work is the quota-seconds of all workloads (request × pods × runtime), Capacity the sum
	// of the queues' nominal quotas, in the unit of the requests (CPUs).
	Work, Capacity float64
	// Bound is the physical bound: a queue borrows only within its cohort, so no scheduler
	// finishes sooner than the busiest cohort's work divided by its cohort's capacity (with
	// identical cohorts, Work ÷ Capacity).
	Bound time.Duration
	// LastCreated is when the generator creates its last workload (each set creates its
	// workloads one interval apart, all sets at once).
	LastCreated time.Duration
}

func readHarnessScenario(path string) (harnessScenario, error) {
	var s harnessScenario
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := yaml.UnmarshalStrict(b, &s); err != nil {
		return s, fmt.Errorf("reading Kueue's scenario %s: %w", path, err)
	}
	return s, nil
}

// bound computes the scenario's workloads, work, capacity and physical bound.
func (s harnessScenario) bound() (harnessBound, error) {
	var out harnessBound
	for _, cohort := range s.Cohorts {
		var work, capacity float64 // of one cohort of this class
		for _, qs := range cohort.QueuesSets {
			nominal, err := resource.ParseQuantity(qs.NominalQuota)
			if err != nil {
				return out, fmt.Errorf("queue class %s: nominalQuota %q: %w", qs.ClassName, qs.NominalQuota, err)
			}
			capacity += float64(qs.Count) * nominal.AsApproximateFloat64()
			for _, ws := range qs.WorkloadsSets {
				created := time.Duration(ws.Count*len(ws.Workloads)*ws.CreationIntervalMs) * time.Millisecond
				out.LastCreated = max(out.LastCreated, created)
				for _, w := range ws.Workloads {
					request, err := resource.ParseQuantity(w.Request)
					if err != nil {
						return out, fmt.Errorf("workload class %s: request %q: %w", w.ClassName, w.Request, err)
					}
					pods := max(w.PodCount, 1)
					work += float64(qs.Count*ws.Count*pods) * request.AsApproximateFloat64() * float64(w.RuntimeMs) / 1000
					out.Workloads += cohort.Count * qs.Count * ws.Count
				}
			}
		}
		if capacity <= 0 {
			return out, fmt.Errorf("cohort class %s has no nominal quota", cohort.ClassName)
		}
		out.Work += float64(cohort.Count) * work
		out.Capacity += float64(cohort.Count) * capacity
		out.Bound = max(out.Bound, time.Duration(work/capacity*float64(time.Second)))
	}
	if out.Capacity == 0 {
		return out, fmt.Errorf("the scenario has no cohort")
	}
	return out, nil
}

// harnessSummary is the runner's summary.yaml (recorder.Summary).
type harnessSummary struct {
	ClusterQueueClasses   map[string]harnessQueueClass    `json:"clusterQueueClasses"`
	WorkloadClasses       map[string]harnessWorkloadClass `json:"workloadClasses"`
	DroppedWorkloadEvents uint64                          `json:"droppedWorkloadEvents"`
}

// harnessQueueClass sums the ClusterQueues of one class.
type harnessQueueClass struct {
	CPUUsed         int64     `json:"cpuUsed"`         // mCPU × ms
	CPUAverageUsage int64     `json:"cpuAverageUsage"` // mCPU
	NominalQuota    int64     `json:"nominalQuota"`    // mCPU
	FirstEventTime  time.Time `json:"firstEventTime"`
	LastEventTime   time.Time `json:"lastEventTime"`
}

// UsagePct is the class's usage as Kueue's checker computes it: the CPU used over the nominal
// quota for the time from the first event of its queues to the last.
func (c harnessQueueClass) UsagePct() (float64, error) {
	elapsed := c.LastEventTime.Sub(c.FirstEventTime).Milliseconds()
	if c.NominalQuota == 0 || elapsed == 0 {
		return 0, fmt.Errorf("no usage: nominal quota %d mCPU over %d ms", c.NominalQuota, elapsed)
	}
	return float64(c.CPUUsed) * 100 / (float64(c.NominalQuota) * float64(elapsed)), nil
}

// harnessWorkloadClass sums the workloads of one class.
type harnessWorkloadClass struct {
	Count                    int32 `json:"count"`
	TotalEvictions           int32 `json:"totalEvictions"`
	AverageTimeToAdmissionMs int64 `json:"averageTimeToAdmissionMs"`
	AverageTimeToFinishMs    int64 `json:"averageTimeToFinishMs"`
}

// harnessCmdStats is minimalkueue.stats.yaml (stats.CmdStats): its process's wall time, from
// its start until the runner stops it when every workload has finished, its CPU and its peak
// resident memory (getrusage's ru_maxrss, KiB on Linux).
type harnessCmdStats struct {
	WallMs int64 `json:"wallMs"`
	UserMs int64 `json:"userMs"`
	SysMs  int64 `json:"sysMs"`
	Maxrss int64 `json:"maxrss"`
}

// harnessRangeSpec is rangespec.yaml, the limits Kueue's checker holds a run to.
type harnessRangeSpec struct {
	Cmd struct {
		MaxWallMs int64 `json:"maxWallMs"`
	} `json:"cmd"`
	ClusterQueueClassesMinUsage      map[string]float64 `json:"clusterQueueClassesMinUsage"`
	WlClassesMaxAvgTimeToAdmissionMs map[string]int64   `json:"wlClassesMaxAvgTimeToAdmissionMs"`
}

// readStrictYAML reads path into v, refusing fields v does not have.
func readStrictYAML(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// harnessPublished are the averages Kueue published for the baseline scenario, from the
// comments of its rangespec.yaml (v0.19.2: five trial runs of its CI): they are what the
// limits were set from, not limits.
var harnessPublished = struct {
	Wall        time.Duration
	UsagePct    map[string]float64
	AvgAdmitted map[string]time.Duration
}{
	Wall:     351116 * time.Millisecond,
	UsagePct: map[string]float64{"cq": 55.9},
	AvgAdmitted: map[string]time.Duration{
		"large":  16501 * time.Millisecond,
		"medium": 76768 * time.Millisecond,
		"small":  215468 * time.Millisecond,
	},
}

// harnessWorkloadsHeader is the header of the runner's wlStates.csv (recorder.WLStateCsvHeader).
var harnessWorkloadsHeader = []string{"id", "class name", "namespace", "name", "ms to admitted", "ms to finish", "num evictions"}

// harnessUnfinished counts the workloads of the runner's wlStates.csv and those that never
// finished. The runner writes its summary even when interrupted, counting a workload never
// admitted as admitted at once: figures of such a run are wrong, and this tells them apart.
func harnessUnfinished(path string) (unfinished, total int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return 0, 0, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], harnessWorkloadsHeader) {
		return 0, 0, fmt.Errorf("%s does not start with the header %q", path, strings.Join(harnessWorkloadsHeader, ","))
	}
	for _, row := range rows[1:] {
		finishedMs, err := strconv.ParseInt(row[5], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: workload %s/%s: ms to finish %q: %w", path, row[2], row[3], row[5], err)
		}
		if finishedMs == 0 {
			unfinished++
		}
	}
	return unfinished, len(rows) - 1, nil
}
