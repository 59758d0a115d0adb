package demo

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// demoJob is one Job the demo submits.
type demoJob struct {
	project, prefix string
	priority        string // priorityClassName label; empty: the default (Job: high)
	preemptible     bool   // kai.scheduler/preemptibility: preemptible; else the default (Job: non-preemptible)
	pods            int32
	gpus            int64 // per pod
	runSeconds      int
}

// demoTemplate is a kind of job in the trickle, with the ranges its instances are drawn from.
type demoTemplate struct {
	weight int
	demoJob
	podChoices     []int32
	gpuChoices     []int64
	runMin, runMax int
}

var demoTemplates = []demoTemplate{
	{weight: 4, demoJob: demoJob{project: "vision", prefix: "train", preemptible: true, priority: "low"}, podChoices: []int32{1}, gpuChoices: []int64{1, 1, 2, 4}, runMin: 90, runMax: 240},
	{weight: 2, demoJob: demoJob{project: "vision", prefix: "ddp", preemptible: true, priority: "medium-low"}, podChoices: []int32{2, 4}, gpuChoices: []int64{2}, runMin: 120, runMax: 300},
	{weight: 1, demoJob: demoJob{project: "nlp", prefix: "pretrain", preemptible: true, priority: "medium"}, podChoices: []int32{2}, gpuChoices: []int64{4}, runMin: 180, runMax: 360},
	{weight: 2, demoJob: demoJob{project: "nlp", prefix: "finetune", preemptible: true, priority: "low"}, podChoices: []int32{1}, gpuChoices: []int64{2, 4}, runMin: 90, runMax: 200},
	{weight: 3, demoJob: demoJob{project: "nlp", prefix: "eval", preemptible: true, priority: "medium-low"}, podChoices: []int32{1}, gpuChoices: []int64{1}, runMin: 45, runMax: 120},
	{weight: 6, demoJob: demoJob{project: "speech", prefix: "asr", preemptible: true, priority: "very-low"}, podChoices: []int32{1}, gpuChoices: []int64{1}, runMin: 60, runMax: 180},
	{weight: 1, demoJob: demoJob{project: "speech", prefix: "tts-ddp", preemptible: true, priority: "low"}, podChoices: []int32{2, 3}, gpuChoices: []int64{1, 2}, runMin: 90, runMax: 200},
	{weight: 1, demoJob: demoJob{project: "speech", prefix: "workspace"}, podChoices: []int32{1}, gpuChoices: []int64{1}, runMin: 300, runMax: 600},
	{weight: 2, demoJob: demoJob{project: "search", prefix: "rerank", preemptible: true}, podChoices: []int32{1}, gpuChoices: []int64{1, 2}, runMin: 60, runMax: 180},
	// search forbids priority changes: this label is ignored, with a PriorityChangeNotAllowed warning.
	{weight: 1, demoJob: demoJob{project: "search", prefix: "hotfix", preemptible: true, priority: "very-high"}, podChoices: []int32{1}, gpuChoices: []int64{1}, runMin: 60, runMax: 120},
	{weight: 3, demoJob: demoJob{project: "ads", prefix: "ctr", preemptible: true, priority: "low"}, podChoices: []int32{1}, gpuChoices: []int64{1, 1, 2, 4}, runMin: 60, runMax: 200},
	{weight: 1, demoJob: demoJob{project: "ads", prefix: "sweep", preemptible: true, priority: "medium-low"}, podChoices: []int32{4}, gpuChoices: []int64{1}, runMin: 90, runMax: 180},
}

// demoUrgent are high-priority jobs submitted every minute or so: they take GPUs back from
// lower-priority work of their own project (S16) or borrowed GPUs of others (S17).
var demoUrgent = []demoJob{
	{project: "vision", prefix: "urgent", preemptible: true, priority: "high", pods: 1, gpus: 4, runSeconds: 90},
	{project: "ads", prefix: "launch-eval", preemptible: true, priority: "high", pods: 1, gpus: 4, runSeconds: 90},
	{project: "nlp", prefix: "urgent-eval", preemptible: true, priority: "very-high", pods: 1, gpus: 2, runSeconds: 60},
}

// demoFirst is the first batch on a cluster without demo jobs: the cluster is full within
// seconds, and the trickle then keeps it oversubscribed.
var demoFirst = []demoJob{
	{project: "nlp", prefix: "pretrain", preemptible: true, priority: "medium", pods: 2, gpus: 4, runSeconds: 300},
	{project: "vision", prefix: "ddp", preemptible: true, priority: "medium-low", pods: 4, gpus: 2, runSeconds: 240},
	{project: "vision", prefix: "train", preemptible: true, priority: "low", pods: 1, gpus: 2, runSeconds: 150},
	{project: "vision", prefix: "train", preemptible: true, priority: "low", pods: 1, gpus: 2, runSeconds: 200},
	{project: "speech", prefix: "workspace", pods: 1, gpus: 1, runSeconds: 600},
	{project: "speech", prefix: "asr", preemptible: true, priority: "very-low", pods: 1, gpus: 1, runSeconds: 70},
	{project: "speech", prefix: "asr", preemptible: true, priority: "very-low", pods: 1, gpus: 1, runSeconds: 90},
	{project: "speech", prefix: "asr", preemptible: true, priority: "very-low", pods: 1, gpus: 1, runSeconds: 110},
	{project: "speech", prefix: "asr", preemptible: true, priority: "very-low", pods: 1, gpus: 1, runSeconds: 130},
	{project: "speech", prefix: "asr", preemptible: true, priority: "very-low", pods: 1, gpus: 1, runSeconds: 150},
	{project: "ads", prefix: "ctr", preemptible: true, priority: "low", pods: 1, gpus: 4, runSeconds: 120},
	{project: "search", prefix: "rerank", preemptible: true, pods: 1, gpus: 2, runSeconds: 100},
	{project: "nlp", prefix: "finetune", preemptible: true, priority: "low", pods: 1, gpus: 4, runSeconds: 150},
	{project: "nlp", prefix: "pretrain", preemptible: true, priority: "medium", pods: 2, gpus: 4, runSeconds: 240},
	{project: "ads", prefix: "sweep", preemptible: true, priority: "medium-low", pods: 4, gpus: 1, runSeconds: 120},
}

// demoDeployments are inference services: non-preemptible by their type, inside deserved quota.
var demoDeployments = []struct {
	project, name string
	replicas      int32
	gpus          int64
}{
	{"search", "embedder", 2, 1},
	{"ads", "ranker", 1, 2},
}

// How much Job work the trickle keeps outstanding (the cluster has 48 GPUs).
const (
	demoLowGPUs  = 60  // below this up to three jobs are submitted per tick
	demoHighGPUs = 76  // between the marks one now and then; above, none
	demoMaxPods  = 50  // and never more unfinished Job pods than this
	demoTTL      = 300 // seconds a finished Job stays visible
)

// draw makes one job of the template.
func (t demoTemplate) draw(r *rand.Rand) demoJob {
	j := t.demoJob
	j.pods = t.podChoices[r.IntN(len(t.podChoices))]
	j.gpus = t.gpuChoices[r.IntN(len(t.gpuChoices))]
	j.runSeconds = t.runMin + r.IntN(t.runMax-t.runMin+1)
	return j
}

// drawDemoJob picks a template by weight and draws a job from it.
func drawDemoJob(r *rand.Rand) demoJob {
	total := 0
	for _, t := range demoTemplates {
		total += t.weight
	}
	n := r.IntN(total)
	for _, t := range demoTemplates {
		if n < t.weight {
			return t.draw(r)
		}
		n -= t.weight
	}
	return demoTemplates[0].draw(r)
}

// object builds the Job: its pods form one gang (parallelism = completions), finish after
// runSeconds on the simulated nodes, and an eviction by Arbiter does not fail the Job
// (objects.Job's pod-failure policy). It declares its expected runtime as a person would,
// rounded up to the minute, so that the waiting workloads' start estimates show from the first
// minutes, before any has finished to take a median from.
func (j demoJob) object(schedulerName string) *batchv1.Job {
	expected := time.Duration((j.runSeconds+59)/60) * time.Minute
	job := objects.Job("", j.project).GenerateName(j.project+"-"+j.prefix+"-").Label(Label, "true").
		Annotations(map[string]string{scheduler.AnnotationExpectedRuntime: expected.String()}).
		Pods(j.pods).GPUs(j.gpus).CPU("2").Memory("8Gi").TTLAfterFinished(demoTTL).
		PodLabel(Label, "true").PodAnnotation(devcluster.AnnotationRunSeconds, strconv.Itoa(j.runSeconds)).
		SchedulerName(schedulerName).NoServiceAccountToken().Container("main", "example.invalid/demo/"+j.prefix+":1")
	if j.priority != "" {
		job.Priority(j.priority)
	}
	if j.preemptible {
		job.Preemptible()
	}
	return job.Obj()
}

func demoDeployment(project, name string, replicas int32, gpus int64, schedulerName string) *appsv1.Deployment {
	return objects.Deployment(name, project).Label(Label, "true").Replicas(replicas).GPUs(gpus).CPU("2").Memory("8Gi").
		SchedulerName(schedulerName).NoServiceAccountToken().Container("server", "example.invalid/demo/"+name+":1").Obj()
}

// outstanding is the unfinished demo Jobs' pods and GPUs.
func outstanding(jobs []batchv1.Job) (pods int, gpus int64) {
	for i := range jobs {
		j := &jobs[i]
		if jobFinished(j) || j.Spec.Parallelism == nil {
			continue
		}
		n := int(*j.Spec.Parallelism)
		if j.Spec.Completions != nil {
			n = min(n, int(*j.Spec.Completions)-int(j.Status.Succeeded))
		}
		if n <= 0 {
			continue
		}
		var per int64
		for _, c := range j.Spec.Template.Spec.Containers {
			q := c.Resources.Requests["nvidia.com/gpu"]
			per += q.Value()
		}
		pods += n
		gpus += int64(n) * per
	}
	return pods, gpus
}

func jobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// Mix decides what the demo submits and when: the first batch on a cluster without demo Jobs
// (or as much of it as tops up what an earlier run left), then at each tick a few jobs while
// less than demoLowGPUs are outstanding, now and then one between the marks, and an urgent job
// every minute or so. Its randomness comes from its seed alone, so that two runs with one seed
// (--demo-seed) submit the same jobs in the same order, and a simulation can replay the demo.
type Mix struct {
	rng        *rand.Rand
	nextUrgent time.Time
	urgent     int
}

// NewMix returns the demo's mix for a seed, starting at start.
func NewMix(seed uint64, start time.Time) *Mix {
	return &Mix{rng: rand.New(rand.NewPCG(seed, seed>>1)), nextUrgent: start.Add(40 * time.Second)}
}

// First is the first batch, given the demo Jobs the cluster holds.
func (m *Mix) First(jobs []batchv1.Job, schedulerName string) []*batchv1.Job {
	var out []*batchv1.Job
	pods, gpus := outstanding(jobs)
	for _, j := range demoFirst {
		if gpus >= demoLowGPUs || pods >= demoMaxPods {
			break
		}
		out = append(out, j.object(schedulerName))
		pods, gpus = pods+int(j.pods), gpus+int64(j.pods)*j.gpus
	}
	return out
}

// Tick is what one tick at now submits, given the demo Jobs the cluster holds.
func (m *Mix) Tick(now time.Time, jobs []batchv1.Job, schedulerName string) []*batchv1.Job {
	pods, gpus := outstanding(jobs)
	if now.After(m.nextUrgent) {
		j := demoUrgent[m.urgent%len(demoUrgent)]
		m.urgent++
		m.nextUrgent = now.Add(time.Duration(50+m.rng.IntN(40)) * time.Second)
		return []*batchv1.Job{j.object(schedulerName)}
	}
	if pods >= demoMaxPods || gpus >= demoHighGPUs {
		return nil
	}
	// Below the low mark, catch up a few jobs at a time; between the marks, now and then.
	var out []*batchv1.Job
	for n := 0; n < 3 && pods < demoMaxPods && (gpus < demoLowGPUs || n == 0 && m.rng.IntN(3) == 0); n++ {
		j := drawDemoJob(m.rng)
		out = append(out, j.object(schedulerName))
		pods, gpus = pods+int(j.pods), gpus+int64(j.pods)*j.gpus
	}
	return out
}

// Start runs the demo trickle, its pods for schedulerName, until ctx ends or the returned stop
// is called (which waits for it). A seed of 0 draws one from the clock (and logs it).
func Start(ctx context.Context, cfg *rest.Config, schedulerName string, seed uint64, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := runDemoWorkloads(ctx, cfg, schedulerName, seed, log); err != nil && ctx.Err() == nil {
			log.Warn("demo workloads stopped", "err", err)
		}
	}()
	return func() { cancel(); wg.Wait() }
}

type demoRunner struct {
	client        kubernetes.Interface
	dyn           dynamic.Interface // for the distributed trainings; nil submits none
	notServed     map[string]bool   // the distributed kinds the cluster does not serve
	schedulerName string
	log           *slog.Logger
	mix           *Mix
	seed          uint64
	failures      int
}

func runDemoWorkloads(ctx context.Context, cfg *rest.Config, schedulerName string, seed uint64, log *slog.Logger) error {
	client, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return err
	}
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	dyn, err := dynamic.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return err
	}
	d := &demoRunner{client: client, dyn: dyn, schedulerName: schedulerName, log: log, mix: NewMix(seed, time.Now()), seed: seed}
	return d.run(ctx, 3*time.Second)
}

func (d *demoRunner) run(ctx context.Context, tick time.Duration) error {
	for _, p := range demoProjects {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.name, Labels: map[string]string{Label: "true"}}}
		if _, err := d.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", p.name, err)
		}
	}
	for _, obj := range Deployments(d.schedulerName) {
		if _, err := d.client.AppsV1().Deployments(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("deployment %s/%s: %w", obj.Namespace, obj.Name, err)
		}
	}
	jobs, err := d.jobs(ctx)
	if err != nil {
		return err
	}
	d.submitAll(ctx, d.mix.First(jobs, d.schedulerName))
	d.distributed(ctx)
	d.log.Info("demo workloads are trickling in", "projects", len(demoProjects), "namespaces", "vision, nlp, speech, search, ads",
		"seed", d.seed)

	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		jobs, err := d.jobs(ctx)
		if err != nil {
			d.warn(ctx, "listing demo jobs", err)
			continue
		}
		d.submitAll(ctx, d.mix.Tick(time.Now(), jobs, d.schedulerName))
		d.distributed(ctx)
	}
}

// submitAll submits jobs in order, stopping at the first refusal.
func (d *demoRunner) submitAll(ctx context.Context, jobs []*batchv1.Job) {
	for _, j := range jobs {
		if !d.submit(ctx, j) {
			return
		}
	}
}

func (d *demoRunner) jobs(ctx context.Context) ([]batchv1.Job, error) {
	list, err := d.client.BatchV1().Jobs("").List(ctx, metav1.ListOptions{LabelSelector: Label + "=true"})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

func (d *demoRunner) submit(ctx context.Context, j *batchv1.Job) bool {
	created, err := d.client.BatchV1().Jobs(j.Namespace).Create(ctx, j, metav1.CreateOptions{})
	if err != nil {
		d.warn(ctx, "submitting a demo job", err)
		return false
	}
	d.failures = 0
	d.log.Debug("demo job submitted", "job", j.Namespace+"/"+created.Name)
	return true
}

// warn logs a failure, but not on shutdown and not every tick while the API server is away.
func (d *demoRunner) warn(ctx context.Context, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	d.failures++
	if d.failures == 1 || d.failures%20 == 0 {
		d.log.Warn("demo: "+what, "err", err, "failures", d.failures)
	}
}

// Deployments are the demo's inference services, as it creates them.
func Deployments(schedulerName string) []*appsv1.Deployment {
	out := make([]*appsv1.Deployment, 0, len(demoDeployments))
	for _, dep := range demoDeployments {
		out = append(out, demoDeployment(dep.project, dep.name, dep.replicas, dep.gpus, schedulerName))
	}
	return out
}
