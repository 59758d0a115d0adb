package views

import (
	"strconv"
	"strings"
)

// NodesPage is the Nodes page: per node a grid of its GPUs and what holds each, from the
// scheduler's last cycle, filtered by node pool and project (the filters are in the URL).
type NodesPage struct {
	Page
	Connected bool // a cluster is connected
	Cycled    bool // the scheduler has finished a cycle since it started
	Pool      string
	Project   string
	LiveHref  string // this view (its filters): the grid refreshes itself from it
	NodeGrid
	// Group is the topology level the nodes are grouped by ("<topology>:<level>"), empty for
	// none; Groupings are the choices; Domains the groups, empty when the nodes are not grouped.
	Group     string
	Groupings []GroupChoice
	Domains   []NodeDomain
}

// GroupChoice is a topology level the Nodes page may group nodes by.
type GroupChoice struct {
	Value string // "<topology>:<level>"
	Label string
}

// NodeDomain is one domain of a topology level (S29) and its nodes: a rack, a block.
type NodeDomain struct {
	Level   string // the level in a word ("rack")
	Name    string // its own label value
	Path    string // the values of its level and the wider ones, widest first, "/"-joined
	Context string // the wider domains it is in, in words ("in block b1")
	// Unlabelled is set for the group of nodes that lack a label of the level or a wider one.
	Unlabelled bool
	Nodes      []NodeGPUs
	GPUs       int // allocatable GPUs of its nodes
	Free       int // free GPUs of its ready, schedulable nodes
}

// ID is the domain's element id.
func (d NodeDomain) ID() string {
	if d.Unlabelled {
		return "domain-none"
	}
	return "domain-" + strings.ReplaceAll(d.Path, "/", "--")
}

// NodeGrid is the GPU grid of a cycle: the nodes that pass the filters, the projects shown
// with their colours, and the filters' choices.
type NodeGrid struct {
	Nodes    []NodeGPUs
	Legend   []ProjectColor // the named projects holding GPUs on the nodes shown, by name
	Pools    []string       // the node pools, by name: the pool filter's choices
	Projects []string       // the projects the caller may read, by name: the project filter's choices
}

// ProjectColor is a project and its swatch in the grid.
type ProjectColor struct {
	Project string
	Swatch
}

// Swatch is how a project's GPUs look: a colour (class gpu-c0 … gpu-c11) and a pattern over
// it (gpu-p0, plain, … gpu-p4), so that colours alike to a reader still differ in pattern.
type Swatch struct {
	Color, Pattern int
}

// Classes are the swatch's classes.
func (s Swatch) Classes() []string {
	return []string{"gpu-c" + strconv.Itoa(s.Color), "gpu-p" + strconv.Itoa(s.Pattern)}
}

// NodeGPUs is one node and its GPUs.
type NodeGPUs struct {
	Name          string
	Pool          string // the node pool it belongs to; empty when none
	Ready         bool
	Unschedulable bool
	GPUs          int // allocatable GPUs: the number of cells
	Held          int // cells held by a pod
	Cells         []GPUCell
}

// The states of a GPU cell.
const (
	GPUFree     = "free"
	GPUHeld     = "held"     // by a workload the caller may read
	GPUHidden   = "hidden"   // by a workload of a project the caller may not read
	GPUExternal = "external" // by a pod Arbiter does not schedule
)

// GPUCell is one GPU of a node. Kubernetes does not say which device a pod holds (without a
// device plugin's help), so cells are given in a stable order, not by device index.
type GPUCell struct {
	State       string
	Workload    string // namespace/name, when held
	WorkloadUID string
	Project     string
	Swatch             // the project's colour and pattern, when held
	Priority    string // the workload's resolved priority, when held
	Preemptible bool
	Label       string // the cell in words: the hover title and what a screen reader says
	Dim         bool   // not of the project the page is filtered by
}

// gpuCellClasses are a GPU cell's classes: its state, its project's swatch, dimmed when the
// page is filtered by another project.
func gpuCellClasses(c GPUCell) []string {
	cls := []string{"gpu", "gpu-" + c.State}
	if c.State == GPUHeld {
		cls = append(cls, c.Swatch.Classes()...)
		if !c.Preemptible && c.Priority != "" {
			cls = append(cls, "gpu-fixed")
		}
	}
	if c.Dim {
		cls = append(cls, "gpu-dim")
	}
	return cls
}
