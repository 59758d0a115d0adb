package workloads

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"

	"github.com/arbiterhq/arbiter/store"
)

// This file holds what a manifest may not do (docs/security.md "Workloads V2"). Whoever may
// submit to a project may send one, so a manifest is refused, naming the field, where it:
//   - is created anywhere but in the project's namespace;
//   - names an owner (it would not be the top owner whose project the scheduler reads);
//   - has a pod template the Pod Security Standard "baseline" refuses (privileged containers,
//     host namespaces, hostPath volumes, added capabilities, host ports, …), as the Kubernetes
//     project's own library judges it at its latest version;
//   - runs a pod template as a ServiceAccount other than the namespace's default (whose rights
//     are the namespace's administrator's to give, not the submitter's to borrow);
//   - hands its pods to another scheduler, or to a node of its choosing (they would escape the
//     project's quota), or gives them a Kubernetes PriorityClass (their priority is Arbiter's,
//     within the project's policy).
//
// Every pod template in the object is checked wherever it is (a Job's, each role of a
// PyTorchJob, each worker group of a RayCluster, a CronJob's Job's): any object holding
// "containers" is a pod spec, so a kind's template in a place this file does not know of is
// checked too.

// baselineEvaluator is the Pod Security Standards' evaluator with the library's checks.
var baselineEvaluator = func() psapolicy.Evaluator {
	e, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks())
	if err != nil {
		panic("workloads: the Pod Security evaluator does not build: " + err.Error())
	}
	return e
}()

// baselineLatest is the level every pod template is held to.
var baselineLatest = psaapi.LevelVersion{Level: psaapi.LevelBaseline, Version: psaapi.LatestVersion()}

// manifestPod is one pod spec found in a manifest: where it is, the spec and the metadata
// beside it (the template's, or the Pod's own), both still part of the object.
type manifestPod struct {
	Path string
	Spec map[string]any
	Meta map[string]any // nil when the template has no metadata yet
	// holder is the object holding "spec" and "metadata" (the template), where metadata is
	// added when it has none.
	holder map[string]any
	// top says the spec is the object's own (a Pod), whose labels are the object's.
	top bool
}

// manifestPods finds every pod spec in the object: every object with a "containers" member,
// and the object holding it when it is that object's "spec". maxPods bounds the walk.
func manifestPods(field string, obj map[string]any) ([]manifestPod, error) {
	var out []manifestPod
	var walk func(v any, path string, holder map[string]any, key string, depth int) error
	walk = func(v any, path string, holder map[string]any, key string, depth int) error {
		if depth > maxManifestDepth {
			return store.InvalidField(path, "%s nests more than %d levels deep; no workload's object does", path, maxManifestDepth)
		}
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["containers"]; ok {
				p := manifestPod{Path: path, Spec: x}
				if key == "spec" && holder != nil {
					p.holder, p.top = holder, depth == 1
					p.Meta, _ = holder["metadata"].(map[string]any)
				}
				if len(out) == maxManifestPods {
					return store.InvalidField(path, "%s holds more than %d pod templates; no workload's object needs as many", field, maxManifestPods)
				}
				out = append(out, p)
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if err := walk(x[k], path+"."+k, x, k, depth+1); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range x {
				if err := walk(e, fmt.Sprintf("%s[%d]", path, i), nil, "", depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return out, walk(obj, field, nil, "", 0)
}

const (
	// maxManifestDepth bounds how deep the walk goes (a RayJob's worker's container's
	// securityContext is about fifteen levels down).
	maxManifestDepth = 64
	// maxManifestPods bounds the pod templates of one manifest.
	maxManifestPods = 64
)

// checkManifest checks a decoded manifest of kind k for the project's namespace: all that
// this file's comment says. It changes nothing and returns the pod specs found.
func checkManifest(field string, u *unstructured.Unstructured, namespaces []string, schedulerName string) ([]manifestPod, error) {
	if ns := u.GetNamespace(); ns != "" && !slices.Contains(namespaces, ns) {
		return nil, store.InvalidField(field+".metadata.namespace", "%s.metadata.namespace %q is not the project's namespace; leave it out (Arbiter creates the workload in %s) or use one of: %s",
			field, ns, namespaces[0], strings.Join(namespaces, ", "))
	}
	if len(u.GetOwnerReferences()) > 0 {
		return nil, store.InvalidField(field+".metadata.ownerReferences", "%s.metadata.ownerReferences: a submitted workload is its own top owner; leave ownerReferences out", field)
	}
	if u.GetGenerateName() != "" {
		return nil, store.InvalidField(field+".metadata.generateName", "%s.metadata.generateName: name the workload with metadata.name and useGivenNameAsPrefix instead", field)
	}
	pods, err := manifestPods(field, u.Object)
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		return nil, store.InvalidField(field+".spec", "%s.spec holds no pod template (no object with containers); Arbiter schedules pods, so a workload must make some", field)
	}
	for _, p := range pods {
		if err := checkPod(p, schedulerName); err != nil {
			return nil, err
		}
	}
	return pods, nil
}

// checkPod holds one pod spec to the baseline standard and the ServiceAccount and scheduler
// rules.
func checkPod(p manifestPod, schedulerName string) error {
	var spec corev1.PodSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(p.Spec, &spec, true); err != nil {
		return store.InvalidField(p.Path, "%s is not a valid pod spec: %v", p.Path, err)
	}
	var meta metav1.ObjectMeta
	if p.Meta != nil {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(p.Meta, &meta, true); err != nil {
			return store.InvalidField(metaPath(p), "%s is not valid object metadata: %v", metaPath(p), err)
		}
	}
	if sa := spec.ServiceAccountName; sa != "" && sa != "default" {
		return store.InvalidField(p.Path+".serviceAccountName", "%s.serviceAccountName %q: a submitted workload runs as its namespace's default ServiceAccount; leave serviceAccountName out", p.Path, sa)
	}
	// The deprecated field still sets the pod's ServiceAccount when serviceAccountName is empty.
	if sa := spec.DeprecatedServiceAccount; sa != "" && sa != "default" {
		return store.InvalidField(p.Path+".serviceAccount", "%s.serviceAccount %q: a submitted workload runs as its namespace's default ServiceAccount; leave serviceAccount out", p.Path, sa)
	}
	if s := spec.SchedulerName; s != "" && s != schedulerName {
		return store.InvalidField(p.Path+".schedulerName", "%s.schedulerName %q: the pods of a submitted workload are scheduled by Arbiter (%s), within the project's quota; leave schedulerName out", p.Path, s, schedulerName)
	}
	if spec.NodeName != "" {
		return store.InvalidField(p.Path+".nodeName", "%s.nodeName %q: a pod given its node would bypass the scheduler and the project's quota; leave nodeName out (a node pool is chosen by the project's pools)", p.Path, spec.NodeName)
	}
	if spec.PriorityClassName != "" {
		return store.InvalidField(p.Path+".priorityClassName", "%s.priorityClassName %q: a submitted workload's priority is Arbiter's, set by metadata.priority within the project's policy; leave priorityClassName out", p.Path, spec.PriorityClassName)
	}
	results := psapolicy.AggregateCheckResults(baselineEvaluator.EvaluatePod(baselineLatest, &meta, &spec))
	if !results.Allowed {
		return store.InvalidField(p.Path, "%s: the Pod Security Standard \"baseline\" refuses this pod: %s; remove what it names (a submitted workload may not reach the node or other pods' namespaces)", p.Path, results.ForbiddenDetail())
	}
	return nil
}

// metaPath is the path of a pod template's metadata.
func metaPath(p manifestPod) string {
	return strings.TrimSuffix(p.Path, ".spec") + ".metadata"
}

// labelManifest gives the object and each pod template what a native submission's objects
// carry (workload/native's objectMeta and podMeta): the project and the workload type on both,
// and the priority and preemptibility on the top owner; and every pod Arbiter's scheduler
// name. A value the manifest gave itself for these labels must be the same.
func labelManifest(field string, u *unstructured.Unstructured, pods []manifestPod, own, podLabels map[string]string, schedulerName string) error {
	if err := noArbiterAnnotations(field+".metadata.annotations", u.Object["metadata"]); err != nil {
		return err
	}
	for _, p := range pods {
		if err := noArbiterAnnotations(metaPath(p)+".annotations", p.Meta); err != nil {
			return err
		}
	}
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range own {
		if have, ok := labels[k]; ok && have != v {
			return store.InvalidField(field+".metadata.labels", "%s.metadata.labels[%s] is %q, but the submission makes it %q; leave the label out (set priority and preemptibility in metadata)", field, k, have, v)
		}
		labels[k] = v
	}
	u.SetLabels(labels)
	for _, p := range pods {
		p.Spec["schedulerName"] = schedulerName
		if p.holder == nil || p.top {
			continue // no template around it, or the Pod itself: its labels are the object's
		}
		if p.Meta == nil {
			p.Meta = map[string]any{}
			p.holder["metadata"] = p.Meta
		}
		pl, _ := p.Meta["labels"].(map[string]any)
		if pl == nil {
			pl = map[string]any{}
			p.Meta["labels"] = pl
		}
		for k, v := range podLabels {
			if have, ok := pl[k]; ok && have != v {
				return store.InvalidField(metaPath(p)+".labels", "%s.labels[%s] is %v, but the submission makes it %q; leave the label out", metaPath(p), k, have, v)
			}
			pl[k] = v
		}
	}
	return nil
}

// noArbiterAnnotations refuses Arbiter's own annotations in a manifest's metadata: they say
// who submitted a workload (its ownership), when it was first queued (its place in the queue)
// and whether Arbiter suspended it, which only Arbiter writes.
func noArbiterAnnotations(path string, metadata any) error {
	m, _ := metadata.(map[string]any)
	annotations, _ := m["annotations"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		if strings.HasPrefix(k, arbiterPrefix) {
			return store.InvalidField(path, "%s[%s]: annotations under %s are Arbiter's own (who submitted the workload, when it was queued); leave them out", path, k, arbiterPrefix)
		}
	}
	return nil
}

// arbiterPrefix is the prefix of Arbiter's own annotations.
const arbiterPrefix = "arbiter.dev/"
