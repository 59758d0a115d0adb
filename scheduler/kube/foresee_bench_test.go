package kube

import (
	"context"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// BenchmarkDryRun is the cost of one dry run as a request pays it (Workloads.DryRun: the
// cache's snapshot, the cycle over it with the workload added, and the start estimate when it
// would wait) at 500 nodes x 8 GPUs and 4,000 workloads, one project deserving them all:
//
//   - start-now: 3,499 one-GPU Jobs running, 500 pending, and the dry run's takes the last GPU;
//   - preempt: 4,000 low-priority preemptible Jobs fill the cluster; a high-priority one preempts;
//   - wait: 3,500 running, 500 pending ahead of it; it waits, so its start is estimated
//     (running Jobs end at their deadlines, 1 to 10 hours after they started).
//
// It reports the time of one dry run at the 50th and 99th percentile and the process's CPU
// time per dry run: what the dry-run slots (web.DryRunLimits) are sized against.
func BenchmarkDryRun(b *testing.B) {
	for _, c := range []struct {
		name             string
		running, pending int
		priority         string
		outcome          scheduler.Outcome
	}{
		{"start-now", 3499, 500, "", scheduler.StartNow},
		{"preempt", 4000, 0, "high", scheduler.StartAfterPreemption},
		{"wait", 3500, 500, "", scheduler.Wait},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := dryRunScheduler(c.running, c.pending)
			var labels map[string]string
			if c.priority != "" {
				labels = map[string]string{LabelPriority: c.priority}
			}
			job := gpuJob("dry-run", 1, 1, labels)
			var times []time.Duration
			var p scheduler.Prediction
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				began := time.Now()
				var err error
				if p, err = s.Workloads().DryRun(context.Background(), job, scheduler.EstimateInput{}); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(began))
			}
			if p.Outcome != c.outcome {
				b.Fatalf("outcome %s, want %s: %s", p.Outcome, c.outcome, p.Message)
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[(len(times)*99)/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(len(p.Victims)), "victims")
		})
	}
}

// dryRunScheduler is a scheduler whose cache holds 500 nodes x 8 GPUs and running one-GPU Jobs
// (low priority, preemptible, eight to a node, each with a deadline) then pending ones.
func dryRunScheduler(running, pending int) *Scheduler {
	settings := foreseeSettings()
	settings.Projects[0].Quotas = map[string]scheduler.Quota{"default": {Deserved: 4000, Limit: scheduler.NoLimit, OverQuotaWeight: 2}}
	s := &Scheduler{cache: NewCache("arbiter")}
	s.settings.Store(settings)
	for i := range 500 {
		s.cache.UpsertNode(gpuNode("node-"+strconv.Itoa(i), 8))
	}
	now := time.Now()
	for i := range running + pending {
		name := "job-" + strconv.Itoa(i)
		uid := "uid-" + name
		job := objects.Job(name, "ns").UID(uid).Created(now.Add(-2 * time.Hour)).GPUs(1).SchedulerName("arbiter").Obj()
		ref := controllerRef("batch/v1", "Job", name, uid)
		pod := gpuPod(name+"-0", "pod-"+name, 1, &ref)
		pod.Labels = map[string]string{"job-name": name, "batch.kubernetes.io/job-name": name, "controller-uid": uid}
		if i < running {
			deadline := int64(3600 * (1 + i%10))
			started := metav1.NewTime(now.Add(-time.Duration(i%60) * time.Minute))
			job.Spec.ActiveDeadlineSeconds, job.Status.StartTime = &deadline, &started
			pod.Spec.NodeName = "node-" + strconv.Itoa(i/8)
			pod.Status.Phase, pod.Status.StartTime = corev1.PodRunning, &started
		}
		s.cache.UpsertOwner(ownerFromJob(job))
		s.cache.UpsertPod(pod)
	}
	return s
}

// processCPU is the process's CPU time so far, the garbage collector's included: on a machine
// shared with other work it measures the dry run much more than wall time does.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
