package native

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/arbiterhq/arbiter/workload/objects"
)

// RequestOf reads back the request a submitted workload's objects were built from (Objects'
// inverse), for a clone: the image, command and arguments, environment variables, resources,
// a distributed training's workers, an inference's replicas and port, and the priority and
// preemptibility only when the objects carry them as labels, that is when they were asked for
// explicitly (or changed since). The node pools come back as the node labels the pods require
// (pools), which only the caller can name. Name and projectId are left to the caller.
func RequestOf(o Objects) (r Request, pools []Pool) {
	var (
		labels map[string]string
		pod    corev1.PodSpec
	)
	switch {
	case o.Job != nil:
		labels, pod = o.Job.Labels, o.Job.Spec.Template.Spec
		if o.Job.Spec.CompletionMode != nil && o.Job.Spec.Parallelism != nil && *o.Job.Spec.Parallelism > 1 {
			n := int(*o.Job.Spec.Parallelism)
			r.Spec.NumWorkers = &n
		}
	case o.PyTorchJob != nil:
		var workers int
		var ok bool
		if labels, pod, workers, ok = pyTorchJobRequest(o.PyTorchJob); !ok {
			return r, nil
		}
		r.Spec.NumWorkers = &workers
	case o.Deployment != nil:
		labels, pod = o.Deployment.Labels, o.Deployment.Spec.Template.Spec
		n := 1
		if o.Deployment.Spec.Replicas != nil {
			n = int(*o.Deployment.Spec.Replicas)
		}
		r.Spec.Autoscaling = &Autoscaling{MinReplicas: &n}
	default:
		return r, nil
	}
	r.Spec.PriorityClass, r.Spec.Preemptibility = labels[LabelPriority], labels[LabelPreemptibility]
	if len(pod.Containers) == 0 {
		return r, nil
	}
	c := pod.Containers[0]
	for _, x := range pod.Containers {
		if x.Name == containerName || x.Name == pyTorchContainer {
			c = x
		}
	}
	r.Spec.Image, r.Spec.Command, r.Spec.Args = c.Image, joinWords(c.Command), joinWords(c.Args)
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			r.Spec.EnvironmentVariables = append(r.Spec.EnvironmentVariables, EnvironmentVariable{Name: e.Name, Value: e.Value})
		}
	}
	if q, ok := c.Resources.Limits[objects.ResourceGPU]; ok {
		n := int(q.Value())
		r.Spec.Compute.GPUDevicesRequest = &n
	} else if q, ok := c.Resources.Requests[objects.ResourceGPU]; ok {
		n := int(q.Value())
		r.Spec.Compute.GPUDevicesRequest = &n
	}
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		cores := float64(q.MilliValue()) / 1000
		r.Spec.Compute.CPUCoreRequest = &cores
	}
	if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
		r.Spec.Compute.CPUMemoryRequest = q.String()
	}
	if o.Deployment != nil && len(c.Ports) > 0 {
		r.Spec.ServingPort = &ServingPort{Container: int(c.Ports[0].ContainerPort)}
	}
	if a := pod.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, m := range t.MatchExpressions {
				if m.Operator == corev1.NodeSelectorOpIn && len(m.Values) == 1 {
					pools = append(pools, Pool{LabelKey: m.Key, LabelValue: m.Values[0]})
				}
			}
		}
	}
	return r, pools
}

// joinWords writes a command's words back as one line that splitWords splits into them again:
// a word with white space, quotes, a backslash or a '$' (or an empty one) is single-quoted.
func joinWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w != "" && !strings.ContainsAny(w, " \t\n'\"\\$") {
			out[i] = w
			continue
		}
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// CloneName suggests a name for a copy of the workload named name: name-2, or the next number
// when name already ends in one, within the limit of a name.
func CloneName(name string) string {
	base, n := name, 2
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if k, err := strconv.Atoi(name[i+1:]); err == nil && k >= 1 && k < 1000 && name[i+1] != '0' {
			base, n = name[:i], k+1
		}
	}
	suffix := "-" + strconv.Itoa(n)
	if len(base)+len(suffix) > maxName {
		base = strings.TrimRight(base[:maxName-len(suffix)], "-")
	}
	return base + suffix
}
