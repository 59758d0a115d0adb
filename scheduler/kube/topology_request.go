package kube

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/arbiterhq/arbiter/scheduler"
)

// This file reads a workload's topology request (S29) in the spellings Kueue and KAI
// workloads already carry, unchanged: KAI's on the top owner (or the pod template), Kueue's on
// each pod template, where each pod set (a JobSet's replicated job, a Kubeflow job's role)
// asks for itself. A value that cannot be read asks for nothing and says so (InvalidTopology).

// The annotations read.
const (
	AnnotationKueueRequired      = "kueue.x-k8s.io/podset-required-topology"
	AnnotationKueuePreferred     = "kueue.x-k8s.io/podset-preferred-topology"
	AnnotationKueueUnconstrained = "kueue.x-k8s.io/podset-unconstrained-topology"
	AnnotationKAITopology        = "kai.scheduler/topology"
	AnnotationKAIRequired        = "kai.scheduler/topology-required-placement"
	AnnotationKAIPreferred       = "kai.scheduler/topology-preferred-placement"
)

// Labels that name the pod set a pod was made for, by the controllers that make them.
var podSetLabels = []string{
	"jobset.sigs.k8s.io/replicatedjob-name", // JobSet (and a TrainJob's)
	"training.kubeflow.org/replica-type",    // Kubeflow's jobs
	"ray.io/group",                          // Ray's head and worker groups
}

// podSetOf is the pod set a pod's labels name, "" when none.
func podSetOf(labels map[string]string) string {
	for _, l := range podSetLabels {
		if v, ok := labels[l]; ok {
			return strings.ToLower(v)
		}
	}
	return ""
}

// podTopology is a pod's (or pod template's) request and the problems of reading it.
type podTopology struct {
	request  *scheduler.TopologyRequest
	problems []string
}

func (p podTopology) equal(o podTopology) bool {
	if (p.request == nil) != (o.request == nil) || (p.request != nil && *p.request != *o.request) {
		return false
	}
	return slices.Equal(p.problems, o.problems)
}

// readTopology reads a request from one object's annotations; whose says whose they are
// ("the workload's", "the pod template's") for the sentences. Both a required and a preferred
// level: the required must hold, the preferred is tried first inside it (as KAI reads them);
// Kueue's spelling over KAI's when both give the same kind with different values.
func readTopology(ann map[string]string, whose string) podTopology {
	var out podTopology
	problem := func(key, v, why string) {
		out.problems = append(out.problems, "Annotation "+key+"="+strconv.Quote(v)+" on "+whose+" "+why)
	}
	pick := func(keys ...string) (string, string) {
		var key, level string
		for _, k := range keys {
			v, ok := ann[k]
			if !ok {
				continue
			}
			if errs := validation.IsQualifiedName(v); v == "" || len(errs) > 0 {
				problem(k, v, "is not a node label key; it is ignored.")
				continue
			}
			if key == "" {
				key, level = k, v
			} else if v != level {
				problem(k, v, "differs from "+key+"="+strconv.Quote(level)+"; the latter is read.")
			}
		}
		return key, level
	}
	reqKey, required := pick(AnnotationKueueRequired, AnnotationKAIRequired)
	prefKey, preferred := pick(AnnotationKueuePreferred, AnnotationKAIPreferred)
	name := ann[AnnotationKAITopology]
	switch {
	case required != "":
		out.request = &scheduler.TopologyRequest{Topology: name, Level: required, Required: true, Preferred: preferred,
			Source: whose + " annotation " + reqKey}
	case preferred != "":
		out.request = &scheduler.TopologyRequest{Topology: name, Level: preferred, Source: whose + " annotation " + prefKey}
	case name != "" && len(out.problems) == 0:
		problem(AnnotationKAITopology, name, "names a topology but no level ("+AnnotationKAIRequired+" or "+
			AnnotationKAIPreferred+"); it asks for nothing.")
	}
	return out
}

// applyTopology sets a workload's request from its top owner's annotations, else from its
// pods' (their templates'): one for the whole workload when its pods make one pod set, else
// one per pod set that asks. Problems are kept once each.
func applyTopology(w *scheduler.Workload, owner map[string]string, pods []podTopology) {
	top := readTopology(owner, "the workload's")
	w.TopologyProblems = append(w.TopologyProblems, top.problems...)
	w.Topology = top.request
	var sets []string
	for i := range pods {
		for _, p := range pods[i].problems {
			if !slices.Contains(w.TopologyProblems, p) {
				w.TopologyProblems = append(w.TopologyProblems, p)
			}
		}
		if w.Topology != nil || pods[i].request == nil {
			continue
		}
		set := w.Pods[i].PodSet
		if slices.Contains(sets, set) {
			continue
		}
		sets = append(sets, set)
		w.PodSetTopologies = append(w.PodSetTopologies, scheduler.PodSetTopology{PodSet: set, Request: *pods[i].request})
	}
	if w.Topology == nil && len(w.PodSetTopologies) == 1 && w.PodSetTopologies[0].PodSet == "" {
		r := w.PodSetTopologies[0].Request
		w.Topology, w.PodSetTopologies = &r, nil // one template: the whole workload asks
	}
}
