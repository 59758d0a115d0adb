package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
)

// The demo's quotas must leave GPUs to borrow: projects within their department, departments
// within the local control plane's default nodes, with something left over in every pool.
func TestDemoQuotasLeaveRoomToBorrow(t *testing.T) {
	pools, err := devcluster.ParseNodeSpec(devcluster.DefaultNodes)
	if err != nil {
		t.Fatal(err)
	}
	capacity := map[string]int{}
	for _, p := range pools {
		capacity[p.Name] = p.Nodes * p.GPUs
	}
	deptDeserved := map[[2]string]int{}
	deptSum := map[string]int{}
	for _, d := range demoDepartments {
		for _, q := range d.quotas {
			deptDeserved[[2]string{d.name, q.pool}] = q.deserved
			deptSum[q.pool] += q.deserved
		}
	}
	for _, p := range demoPools {
		if capacity[p.name] == 0 {
			t.Errorf("demo pool %s has no nodes in %s", p.name, devcluster.DefaultNodes)
		}
		if deptSum[p.name] >= capacity[p.name] {
			t.Errorf("pool %s: departments deserve %d of %d GPUs; nothing is left to borrow", p.name, deptSum[p.name], capacity[p.name])
		}
	}
	projSum := map[[2]string]int{}
	for _, p := range demoProjects {
		for _, q := range p.quotas {
			projSum[[2]string{p.department, q.pool}] += q.deserved
		}
	}
	for k, n := range projSum {
		if n > deptDeserved[k] {
			t.Errorf("department %s, pool %s: projects deserve %d, the department %d", k[0], k[1], n, deptDeserved[k])
		}
	}
}

func TestDemoJobObject(t *testing.T) {
	j := demoJob{project: "vision", prefix: "ddp", preemptible: true, priority: "medium-low", pods: 4, gpus: 2, runSeconds: 120}
	obj := j.object("arbiter")
	if obj.Namespace != "vision" || obj.GenerateName != "vision-ddp-" {
		t.Errorf("namespace %q, generateName %q", obj.Namespace, obj.GenerateName)
	}
	if *obj.Spec.Parallelism != 4 || *obj.Spec.Completions != 4 {
		t.Errorf("a gang of 4 needs parallelism = completions = 4: %d, %d", *obj.Spec.Parallelism, *obj.Spec.Completions)
	}
	if obj.Labels["priorityClassName"] != "medium-low" || obj.Labels["kai.scheduler/preemptibility"] != "preemptible" || obj.Labels[Label] != "true" {
		t.Errorf("labels %v", obj.Labels)
	}
	spec := obj.Spec.Template.Spec
	if spec.SchedulerName != "arbiter" || spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("schedulerName %q, restartPolicy %q", spec.SchedulerName, spec.RestartPolicy)
	}
	if got := obj.Spec.Template.Annotations[devcluster.AnnotationRunSeconds]; got != "120" {
		t.Errorf("run-seconds %q", got)
	}
	if got := obj.Annotations["arbiter.dev/expected-runtime"]; got != "2m0s" {
		t.Errorf("expected runtime %q, want 2m0s (its 120 s)", got)
	}
	if got := (demoJob{project: "nlp", prefix: "x", pods: 1, gpus: 1, runSeconds: 61}).object("x").Annotations["arbiter.dev/expected-runtime"]; got != "2m0s" {
		t.Errorf("expected runtime of a 61 s Job %q, want 2m0s (rounded up to the minute)", got)
	}
	if r := obj.Spec.PodFailurePolicy.Rules; len(r) != 1 || r[0].Action != batchv1.PodFailurePolicyActionIgnore || r[0].OnPodConditions[0].Type != corev1.DisruptionTarget {
		t.Errorf("an eviction must not fail the Job: %+v", r)
	}
	if q := spec.Containers[0].Resources.Requests["nvidia.com/gpu"]; q.Value() != 2 {
		t.Errorf("GPUs per pod %v", q)
	}
	if l := (demoJob{project: "speech", prefix: "workspace", pods: 1, gpus: 1}).object("x").Labels; len(l) != 1 {
		t.Errorf("a job with the defaults carries only the demo label: %v", l)
	}

	projects := map[string]bool{}
	for _, p := range demoProjects {
		projects[p.name] = true
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		j := drawDemoJob(r)
		if !projects[j.project] || j.pods < 1 || j.gpus < 1 || j.gpus > 8 || j.runSeconds < 30 {
			t.Fatalf("drawn job %+v", j)
		}
	}
	for _, j := range append(append([]demoJob{}, demoFirst...), demoUrgent...) {
		if !projects[j.project] || j.pods < 1 || j.gpus < 1 || j.runSeconds < 30 {
			t.Errorf("scripted job %+v", j)
		}
	}
}

func TestOutstanding(t *testing.T) {
	job := func(pods, succeeded int32, gpus int64, finished bool) batchv1.Job {
		j := (demoJob{project: "nlp", prefix: "x", pods: pods, gpus: gpus, runSeconds: 60}).object("arbiter")
		j.Status.Succeeded = succeeded
		if finished {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		}
		return *j
	}
	pods, gpus := outstanding([]batchv1.Job{job(2, 0, 8, false), job(4, 1, 2, false), job(3, 3, 1, true), job(1, 0, 4, true)})
	if pods != 5 || gpus != 22 {
		t.Errorf("outstanding = %d pods, %d GPUs; want 5, 22", pods, gpus)
	}
}

// The runner makes the namespaces and Deployments, submits the first batch on an empty
// cluster, and not again after a restart.
func TestDemoRunner(t *testing.T) {
	client := fake.NewSimpleClientset()
	n := 0
	client.PrependReactor("create", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.CreateAction).GetObject().(*batchv1.Job)
		if obj.Name == "" {
			n++
			obj.Name = fmt.Sprintf("%s%d", obj.GenerateName, n)
		}
		return false, nil, nil // the tracker stores it
	})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runFor := func(d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		r := &demoRunner{client: client, schedulerName: "arbiter", log: log, mix: NewMix(3, time.Now())}
		if err := r.run(ctx, 10*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	runFor(100 * time.Millisecond)
	ctx := context.Background()
	for _, p := range demoProjects {
		if _, err := client.CoreV1().Namespaces().Get(ctx, p.name, metav1.GetOptions{}); err != nil {
			t.Errorf("namespace %s: %v", p.name, err)
		}
	}
	deps, _ := client.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if len(deps.Items) != len(demoDeployments) {
		t.Errorf("%d deployments, want %d", len(deps.Items), len(demoDeployments))
	}
	jobs, _ := client.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})
	pods, gpus := outstanding(jobs.Items)
	if len(jobs.Items) < len(demoFirst)-1 || gpus < demoLowGPUs || pods > demoMaxPods+8 || gpus > demoHighGPUs+16 {
		t.Errorf("after the first run: %d jobs, %d pods, %d GPUs outstanding", len(jobs.Items), pods, gpus)
	}
	before := len(jobs.Items)
	runFor(30 * time.Millisecond) // a restart with work outstanding: no first batch
	jobs, _ = client.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})
	if more := len(jobs.Items) - before; more >= len(demoFirst) || gpus >= demoHighGPUs && more > 0 {
		t.Errorf("a restart submitted %d more jobs while %d GPUs were outstanding", more, gpus)
	}
}

// One seed, one mix: two mixes of the same seed submit the same jobs at each tick, given the
// same cluster; another seed submits others.
func TestMixIsItsSeed(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	describe := func(seed uint64) []string {
		m := NewMix(seed, start)
		var jobs []batchv1.Job
		var out []string
		add := func(js []*batchv1.Job) {
			for _, j := range js {
				jobs = append(jobs, *j)
				c := j.Spec.Template.Spec.Containers[0]
				gpus := c.Resources.Requests["nvidia.com/gpu"]
				out = append(out, fmt.Sprintf("%s %s %d×%s %s", j.Namespace, j.GenerateName, *j.Spec.Parallelism, gpus.String(),
					j.Spec.Template.Annotations["arbiter.dev/run-seconds"]))
			}
		}
		add(m.First(nil, "arbiter"))
		for i := range 200 {
			// finish the oldest job now and then, so that the mix keeps submitting
			if i%2 == 0 && len(jobs) > 0 {
				jobs = jobs[1:]
			}
			add(m.Tick(start.Add(time.Duration(i)*3*time.Second), jobs, "arbiter"))
		}
		return out
	}
	a, b, other := describe(7), describe(7), describe(8)
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("two mixes of seed 7 differ (-first +second):\n%s", d)
	}
	if cmp.Equal(a, other) {
		t.Errorf("seeds 7 and 8 submitted the same %d jobs", len(a))
	}
	if len(a) < 50 {
		t.Errorf("only %d jobs in 10 minutes", len(a))
	}
}
