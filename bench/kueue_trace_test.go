package bench

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// kueueTrace records, as watches see them and to the millisecond (the API's own timestamps
// are whole seconds), what happens to Kueue's Workloads and Jobs: each Workload condition's
// transitions, and each Job's unsuspension, re-suspension and its active pods reaching none.
// It explains a slow submission: whether the time went to Kueue's admission (waiting for a
// victim's quota to be released) or to the Job controller after the unsuspend. It holds the
// objects of the namespaces it is given only, and forget empties it whenever a round's fill is
// deleted, so it is bounded by one fill and two rounds' submissions.
type kueueTrace struct {
	namespaces map[string]bool
	mu         sync.Mutex
	workloads  map[string]*traceWorkload // by namespace/name
	jobs       map[string]*traceJob      // by namespace/name
}

type traceWorkload struct {
	uid, job   string // the Job that owns it, namespace/name
	seen       time.Time
	conditions map[string]string // type → status last seen
	// transitions are the condition changes in the order seen.
	transitions []traceTransition
}

type traceTransition struct {
	at                            time.Time
	kind, status, reason, message string
}

type traceJob struct {
	unsuspended, resuspended, drained time.Time
}

// startKueueTrace starts watches of Workloads and Jobs, recording those in namespaces.
func startKueueTrace(cb *clusterBench, dyn dynamic.Interface, namespaces ...string) *kueueTrace {
	t := &kueueTrace{namespaces: map[string]bool{}, workloads: map[string]*traceWorkload{}, jobs: map[string]*traceJob{}}
	for _, ns := range namespaces {
		t.namespaces[ns] = true
	}
	wf := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	_, _ = wf.ForResource(kueueWorkloads).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.observeWorkload(obj) },
		UpdateFunc: func(_, obj any) { t.observeWorkload(obj) },
	})
	jf := informers.NewSharedInformerFactory(cb.client, 0)
	_, _ = jf.Batch().V1().Jobs().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.observeJob(obj.(*batchv1.Job)) },
		UpdateFunc: func(_, obj any) { t.observeJob(obj.(*batchv1.Job)) },
	})
	wf.Start(cb.ctx.Done())
	jf.Start(cb.ctx.Done())
	wf.WaitForCacheSync(cb.ctx.Done())
	jf.WaitForCacheSync(cb.ctx.Done())
	return t
}

// workloadObject is the part of a Workload the trace reads.
type workloadObject struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            struct {
		Conditions []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

func (t *kueueTrace) observeWorkload(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	now := time.Now()
	var w workloadObject
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &w); err != nil || !t.namespaces[w.Namespace] {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	key := w.Namespace + "/" + w.Name
	tw := t.workloads[key]
	if tw == nil {
		tw = &traceWorkload{uid: string(w.UID), seen: now, conditions: map[string]string{}}
		for _, o := range w.OwnerReferences {
			if o.Kind == "Job" {
				tw.job = w.Namespace + "/" + o.Name
			}
		}
		t.workloads[key] = tw
	}
	for _, c := range w.Status.Conditions {
		if tw.conditions[c.Type] != string(c.Status) {
			tw.conditions[c.Type] = string(c.Status)
			tw.transitions = append(tw.transitions, traceTransition{at: now, kind: c.Type, status: string(c.Status), reason: c.Reason, message: c.Message})
		}
	}
}

func (t *kueueTrace) observeJob(j *batchv1.Job) {
	if !t.namespaces[j.Namespace] {
		return
	}
	now := time.Now()
	suspended := j.Spec.Suspend != nil && *j.Spec.Suspend
	t.mu.Lock()
	defer t.mu.Unlock()
	key := j.Namespace + "/" + j.Name
	tj := t.jobs[key]
	if tj == nil {
		tj = &traceJob{}
		t.jobs[key] = tj
	}
	switch {
	case !suspended && tj.unsuspended.IsZero():
		tj.unsuspended = now
	case suspended && !tj.unsuspended.IsZero() && tj.resuspended.IsZero():
		tj.resuspended = now
	}
	if !tj.resuspended.IsZero() && tj.drained.IsZero() && j.Status.Active == 0 {
		tj.drained = now
	}
}

// podsReady counts the Workloads in namespace ns whose PodsReady condition was last seen True:
// Kueue writes it once it has seen the Job's pods ready, the last thing it does for a Job
// that runs.
func (t *kueueTrace) podsReady(ns string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for key, w := range t.workloads {
		if strings.HasPrefix(key, ns+"/") && w.conditions["PodsReady"] == "True" {
			n++
		}
	}
	return n
}

// forget drops what the trace holds, at the end of a round.
func (t *kueueTrace) forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.workloads, t.jobs = map[string]*traceWorkload{}, map[string]*traceJob{}
}

// explain is the timeline of Job job (namespace/name) submitted at submitted, in seconds from
// the submission: its Workload's creation and condition changes, those of the Workloads it
// preempted (found by its UID in their Preempted condition's message) and their Jobs'
// re-suspension and drain, its own Job's unsuspension, and its pod's creation, binding and
// Running.
func (t *kueueTrace) explain(job string, submitted, podSeen, bound, running time.Time) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	rel := func(at time.Time) string {
		if at.IsZero() {
			return "never"
		}
		return fmt.Sprintf("%+.3fs", at.Sub(submitted).Seconds())
	}
	var own *traceWorkload
	for _, w := range t.workloads {
		if w.job == job {
			own = w
		}
	}
	if own == nil {
		return fmt.Sprintf("%s: no Workload seen; pod created %s, bound %s, Running %s", job, rel(podSeen), rel(bound), rel(running))
	}
	var parts []string
	parts = append(parts, "Workload created "+rel(own.seen))
	for _, tr := range own.transitions {
		parts = append(parts, fmt.Sprintf("%s=%s (%s) %s", tr.kind, tr.status, tr.reason, rel(tr.at)))
	}
	var victims []string
	for key, w := range t.workloads {
		for _, tr := range w.transitions {
			if tr.kind == "Preempted" && tr.status == "True" && strings.Contains(tr.message, own.uid) {
				v := fmt.Sprintf("victim %s: Preempted %s", key, rel(tr.at))
				for _, vt := range w.transitions {
					if vt.at.After(tr.at) || vt.at.Equal(tr.at) {
						if vt.kind == "QuotaReserved" || vt.kind == "Evicted" || vt.kind == "Admitted" {
							v += fmt.Sprintf(", %s=%s %s", vt.kind, vt.status, rel(vt.at))
						}
					}
				}
				if j := t.jobs[w.job]; j != nil {
					v += fmt.Sprintf(", its Job suspended %s, no pod active %s", rel(j.resuspended), rel(j.drained))
				}
				victims = append(victims, v)
			}
		}
	}
	slices.Sort(victims)
	parts = append(parts, victims...)
	if j := t.jobs[job]; j != nil {
		parts = append(parts, "Job unsuspended "+rel(j.unsuspended))
	}
	parts = append(parts, "pod created "+rel(podSeen), "bound "+rel(bound), "Running "+rel(running))
	return job + ": " + strings.Join(parts, "; ")
}
