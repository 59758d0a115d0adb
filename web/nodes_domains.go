package web

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/views"
)

// The Nodes page groups nodes by the domains of a topology level (S29): the nodes that share
// the values of that level's label and of every wider level of its topology, as the scheduler
// counts domains (a rack is named by its block and its own value). A grouping is named
// "<topology>:<level>" in the page's URL (group=racks:topology.arbiter.dev/rack).

// topologyGroupings are the levels the Nodes page may group by: each level of each topology of
// the cycle but the node's own (kubernetes.io/hostname, a domain of one node), in the
// topologies' order, widest first.
func topologyGroupings(snap *scheduler.Snapshot) []views.GroupChoice {
	out := []views.GroupChoice{}
	if snap == nil {
		return out
	}
	for _, t := range snap.Topologies {
		for _, level := range t.Levels {
			if level == corev1.LabelHostname {
				continue
			}
			out = append(out, views.GroupChoice{Value: t.Name + ":" + level, Label: levelName(level) + " (" + t.Name + ": " + level + ")"})
		}
	}
	return out
}

// levelName is a level's label key in a word: its name without the DNS prefix ("rack" for
// topology.arbiter.dev/rack).
func levelName(level string) string {
	_, name, ok := strings.Cut(level, "/")
	if !ok {
		return level
	}
	return name
}

// nodeDomains groups the grid's nodes by the domains of the grouping named group; nil when
// group names no level of the cycle's topologies (the page then lists the nodes ungrouped).
// Domains are sorted by their path; nodes that lack one of the labels come last, together.
// A domain's free GPUs are the free cells of its ready, schedulable nodes: what a job could
// still be given there.
func nodeDomains(snap *scheduler.Snapshot, nodes []views.NodeGPUs, group string) []views.NodeDomain {
	name, level, ok := strings.Cut(group, ":")
	if snap == nil || !ok {
		return nil
	}
	i := slices.IndexFunc(snap.Topologies, func(t scheduler.Topology) bool { return t.Name == name })
	if i < 0 {
		return nil
	}
	levels := snap.Topologies[i].Levels
	depth := slices.Index(levels, level)
	if depth < 0 || level == corev1.LabelHostname {
		return nil
	}
	chain := levels[:depth+1]
	labels := make(map[string]map[string]string, len(snap.Nodes))
	for i := range snap.Nodes {
		labels[snap.Nodes[i].Name] = snap.Nodes[i].Labels
	}
	byPath := map[string]*views.NodeDomain{}
	var none *views.NodeDomain
	for _, n := range nodes {
		d := domainOf(labels[n.Name], chain)
		if d == nil {
			if none == nil {
				none = &views.NodeDomain{Level: levelName(level), Unlabelled: true, Name: "not in a " + levelName(level),
					Context: "nodes lacking a label of " + strings.Join(chain, ", ")}
			}
			d = none
		} else if have, seen := byPath[d.Path]; seen {
			d = have
		} else {
			byPath[d.Path] = d
		}
		d.Nodes = append(d.Nodes, n)
		d.GPUs += n.GPUs
		if n.Ready && !n.Unschedulable {
			for _, c := range n.Cells {
				if c.State == views.GPUFree {
					d.Free++
				}
			}
		}
	}
	out := make([]views.NodeDomain, 0, len(byPath)+1)
	for _, d := range byPath {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b views.NodeDomain) int { return cmp.Compare(a.Path, b.Path) })
	if none != nil {
		out = append(out, *none)
	}
	return out
}

// domainOf is the domain of chain's last level a node with labels is in; nil when it lacks
// one of chain's labels.
func domainOf(labels map[string]string, chain []string) *views.NodeDomain {
	values := make([]string, len(chain))
	for i, key := range chain {
		v, ok := labels[key]
		if !ok || v == "" {
			return nil
		}
		values[i] = v
	}
	d := &views.NodeDomain{Level: levelName(chain[len(chain)-1]), Name: values[len(values)-1], Path: strings.Join(values, "/")}
	for i := range len(chain) - 1 {
		if d.Context != "" {
			d.Context += ", "
		}
		d.Context += "in " + levelName(chain[i]) + " " + values[i]
	}
	return d
}
