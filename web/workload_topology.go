package web

import (
	"strings"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/views"
)

// WorkloadTopology, when the pods' source has it, says where a workload that asks for a
// topology was placed in the scheduler's last cycle (S29): the domain its pods (or each pod
// set's) are in.
type WorkloadTopology interface {
	WorkloadTopology(uid string) []scheduler.TopologyPlacement
}

// workloadTopology is the workload page's lines on where the workload landed; none when it asks
// for no topology, has no pods placed, or no cluster is connected.
func workloadTopology(pods WorkloadPods, uid string) []views.TopologyLanding {
	source, ok := pods.(WorkloadTopology)
	if !ok {
		return nil
	}
	var out []views.TopologyLanding
	for _, p := range source.WorkloadTopology(uid) {
		out = append(out, topologyLanding(p))
	}
	return out
}

// topologyLanding is one placement in words.
func topologyLanding(p scheduler.TopologyPlacement) views.TopologyLanding {
	l := views.TopologyLanding{PodSet: p.PodSet, Required: p.Required, Topology: p.Topology, Level: p.Level, Domain: p.Domain}
	if p.Level == "" {
		l.Sentence = "Spread wider than the levels it prefers"
		if p.Topology != "" {
			l.Sentence += " (topology " + p.Topology + ")"
		}
		l.Sentence += ": no one domain of them had room."
		return l
	}
	values := strings.Split(p.Domain, "/")
	l.Sentence = "In " + levelName(p.Level) + " " + values[len(values)-1]
	if len(values) > 1 {
		l.Sentence += " (" + p.Domain + ")"
	}
	if p.Topology != "" {
		l.Sentence += ", by topology " + p.Topology + "."
	} else {
		l.Sentence += "; no topology defines " + p.Level + ": its domains are the nodes sharing that label's value."
	}
	return l
}
