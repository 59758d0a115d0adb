package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/metrics/exposition"
	"github.com/arbiterhq/arbiter/store"
)

// These tests have the API server refuse Arbiter's eviction, resume or bind (a
// ValidatingAdmissionPolicy, as an admission webhook or a policy engine of the cluster's may):
// what was refused is neither told in the workload's history or Kubernetes events nor taken
// as done, it is tried again after a backoff, and once the refusal is lifted it is done, and
// told, once.

// TestS19_ARefusedEvictionIsTriedAgainNotRecorded: while the API server refuses to delete
// the victim's pods, the victim keeps running, its history says no Preempted and no Preempted
// event is sent, and Arbiter tries again after a backoff (as for a bind); once it may, the
// victim is evicted once and the preemptor runs.
func TestS19_ARefusedEvictionIsTriedAgainNotRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("refused-evict", 2, store.PolicyUpdate{})
	victim := e.job(jobSpec{name: "victim", namespace: ns, pods: 2, labels: labels("low", "preemptible")})
	e.eventually("the victim runs", time.Minute, func() bool { return e.running(ns, "victim") == 2 })
	pod := e.jobPods(ns, "victim")[0].Name
	lift := e.refuse("victim-pods", ns, admissionv1.Delete, "", "pods",
		`!has(oldObject.metadata.labels) || !('job-name' in oldObject.metadata.labels) || oldObject.metadata.labels['job-name'] != 'victim'`,
		func(ctx context.Context) error {
			return e.client.CoreV1().Pods(ns).Delete(ctx, pod, metav1.DeleteOptions{DryRun: dryRun})
		})
	before := e.refusals("victim-pods")
	e.job(jobSpec{name: "urgent", namespace: ns, labels: labels("high", "")})

	e.eventually("Arbiter tries the eviction again after it is refused", time.Minute, func() bool {
		return e.refusals("victim-pods") >= before+4 // each try deletes two pods
	})
	// The preemptor held back 2, 4, 8 and then 10 s after each refusal, its eviction is tried
	// at most four times in the next ten seconds, however fast the machine.
	from := e.refusals("victim-pods")
	time.Sleep(10 * time.Second)
	if n := e.refusals("victim-pods") - from; n > 2*4 {
		t.Errorf("%v deletions refused in 10 s: a refused eviction is tried again at every cycle, not after a backoff", n)
	}
	if n := e.running(ns, "victim"); n != 2 {
		t.Errorf("%d of the victim's pods run while their deletion is refused, want 2", n)
	}
	e.untold(ns, victim, "Preempted")

	lift()
	e.eventually("the urgent Job runs once the eviction may go", time.Minute, func() bool { return e.running(ns, "urgent") == 1 })
	e.toldOnce(victim, "Preempted")
}

// TestS20_ARefusedResumeIsTriedAgainNotRecorded: in suspend mode, while the API server refuses
// to resume the suspended victim, it stays suspended, its history says no Resumed and no
// Resumed event is sent, and Arbiter tries again after a backoff; once it may, it is resumed
// once and runs.
func TestS20_ARefusedResumeIsTriedAgainNotRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("refused-resume", 2, store.PolicyUpdate{PreemptionMode: opt("suspend")})
	// A Job its owner keeps suspended: resuming it is what the probe tries, dry.
	yes := true
	e.job(jobSpec{name: "probe", namespace: ns, suspend: &yes})
	lift := e.refuse("resume", ns, admissionv1.Update, "batch", "jobs",
		`!(has(oldObject.spec.suspend) && oldObject.spec.suspend) || (has(object.spec.suspend) && object.spec.suspend)`,
		func(ctx context.Context) error {
			j, err := e.client.BatchV1().Jobs(ns).Get(ctx, "probe", metav1.GetOptions{})
			if err != nil {
				return err
			}
			j.Spec.Suspend = ptr(false)
			_, err = e.client.BatchV1().Jobs(ns).Update(ctx, j, metav1.UpdateOptions{DryRun: dryRun})
			return err
		})
	before := e.refusals("resume")
	victim := e.job(jobSpec{name: "victim", namespace: ns, pods: 2, labels: labels("low", "preemptible")})
	e.eventually("the victim runs", time.Minute, func() bool { return e.running(ns, "victim") == 2 })
	e.job(jobSpec{name: "urgent", namespace: ns, runSeconds: "3", labels: labels("high", "")})

	e.eventually("Arbiter tries the resume again after it is refused", 2*time.Minute, func() bool {
		return e.refusals("resume") >= before+2
	})
	// Held back 2, 4, 8 and then 10 s after each refusal, the resume is tried at most four
	// times in the next ten seconds, however fast the machine.
	from := e.refusals("resume")
	time.Sleep(10 * time.Second)
	if n := e.refusals("resume") - from; n > 4 {
		t.Errorf("%v resumes refused in 10 s: a refused resume is tried again at every cycle, not after a backoff", n)
	}
	e.untold(ns, victim, "Resumed")

	lift()
	e.eventually("the victim runs again once it may be resumed", time.Minute, func() bool { return e.running(ns, "victim") == 2 })
	e.toldOnce(victim, "Resumed")
	e.toldOnce(victim, "Preempted")
}

// TestS22_ARefusedBindIsTriedAgainAfterABackoff: while the API server refuses a pod's bind,
// Arbiter tries it again after a delay that doubles from a second to ten (kube-scheduler's
// backoff), not at every cycle its own failure brought (more than a hundred a second); once
// it may, the pod is bound and its workload admitted once.
func TestS22_ARefusedBindIsTriedAgainAfterABackoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("refused-bind", 2, store.PolicyUpdate{})
	// A pod no scheduler takes: binding it to no node, dry, is what the probe tries.
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns},
		Spec: corev1.PodSpec{SchedulerName: "nobody", Containers: []corev1.Container{{Name: "c", Image: "probe"}}}}
	if _, err := e.client.CoreV1().Pods(ns).Create(e.ctx, probe, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lift := e.refuse("binds", ns, admissionv1.Create, "", "pods/binding", "false", func(ctx context.Context) error {
		return e.client.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns},
			Target: corev1.ObjectReference{Kind: "Node", Name: "nowhere"}}, metav1.CreateOptions{DryRun: dryRun})
	})
	before := e.refusals("binds")
	job := e.job(jobSpec{name: "refused", namespace: ns, labels: labels("low", "preemptible")})
	e.eventually("Arbiter tries the bind again after it is refused", time.Minute, func() bool {
		return e.refusals("binds") >= before+2
	})
	// Held back 2, 4, 8 and then 10 s after each refusal, the pod can be tried at most four
	// times in the next ten seconds, however fast the machine (a slower one tries less).
	from := e.refusals("binds")
	time.Sleep(10 * time.Second)
	if n := e.refusals("binds") - from; n > 4 {
		t.Errorf("%v binds refused in 10 s: a refused bind is tried again at every cycle, not after a backoff", n)
	}

	lift()
	e.eventually("the pod is bound once its bind may go", time.Minute, func() bool { return e.running(ns, "refused") == 1 })
	e.toldOnce(job, "Admitted")
}

// untold fails the test if a Job's history or its events tell kind (a Preempted or
// Resumed the API server refused).
func (e *env) untold(ns string, job *batchv1.Job, kind string) {
	e.t.Helper()
	if h := e.history(string(job.UID)); countOf(h, kind) != 0 {
		e.t.Errorf("the history of %s %v tells %s, which the API server refused", job.Name, h, kind)
	}
	if events := e.events(ns, job.Name); hasEvent(events, kind+": ") {
		e.t.Errorf("a %s event the API server refused: %s", kind, fmtEvents(events))
	}
}

// toldOnce waits until a Job's history tells kind, and fails the test if it tells it twice.
func (e *env) toldOnce(job *batchv1.Job, kind string) {
	e.t.Helper()
	e.eventually("the history of "+job.Name+" tells "+kind, 10*time.Second, func() bool {
		return countOf(e.history(string(job.UID)), kind) > 0
	})
	if h := e.history(string(job.UID)); countOf(h, kind) != 1 {
		e.t.Errorf("the history of %s %v, want one %s", job.Name, h, kind)
	}
}

// refuse has the API server refuse, in namespace ns, the operation on group's resource
// whenever the CEL expression is false (a ValidatingAdmissionPolicy and its binding, named
// name and the test's id). The API server takes a policy up, and lets it go, a moment after
// it is written: refuse returns once probe, a dry run of such a call, is refused, and lift
// (also done when the test ends) once it is not.
func (e *env) refuse(name, ns string, op admissionv1.OperationType, group, resource, expression string, probe func(context.Context) error) (lift func()) {
	e.t.Helper()
	full := name + "-" + e.id
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: full},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{op},
					Rule:       admissionv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: expression, Message: "refused by the test " + full}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: full},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        full,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}},
		},
	}
	api := e.client.AdmissionregistrationV1()
	if _, err := api.ValidatingAdmissionPolicies().Create(e.ctx, policy, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(e.ctx, binding, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	refused := func() bool {
		err := probe(e.ctx)
		return err != nil && strings.Contains(err.Error(), "refused by the test "+full)
	}
	e.eventually("the refusal "+full+" is in force", 30*time.Second, refused)
	lifted := false
	lift = func() {
		if lifted {
			return
		}
		lifted = true
		_ = api.ValidatingAdmissionPolicyBindings().Delete(e.ctx, full, metav1.DeleteOptions{})
		_ = api.ValidatingAdmissionPolicies().Delete(e.ctx, full, metav1.DeleteOptions{})
		e.eventually("the refusal "+full+" is lifted", 30*time.Second, func() bool { return !refused() })
	}
	e.t.Cleanup(lift)
	return lift
}

// dryRun is the option of a call the API server checks (admission included) and does not
// carry out.
var dryRun = []string{metav1.DryRunAll}

// refusals is how many calls the API server has refused under refuse's policy name.
func (e *env) refusals(name string) float64 {
	e.t.Helper()
	raw, err := e.client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	families, err := exposition.Parse(bytes.NewReader(raw))
	if err != nil {
		e.t.Fatal(err)
	}
	return families.Value("apiserver_validating_admission_policy_check_total",
		map[string]string{"policy": name + "-" + e.id, "enforcement_action": "deny"})
}
