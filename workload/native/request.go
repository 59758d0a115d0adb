// Package nativeworkload turns a submission shaped like NVIDIA Run:ai's (POST
// /api/v1/workloads/workspaces, /trainings, /distributed, /inferences) into the standard
// Kubernetes objects Arbiter schedules. It is pure: Parse checks a request into a typed
// Workload (every refusal names its field as the API spells it), and Objects builds the Job or
// Deployment and the Service from it. What needs the database (the project, its policy, the
// priority dictionary, node pools) is resolved by the caller, web's submission handler, which
// fills the Workload's Namespace, Project and Pools.
package native

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/arbiterhq/arbiter/scheduler"
)

// Kind is one of the four native kinds: the path segment of its route, the workload type it is
// (the workload types table's name, which the scheduler reads from the arbiter.dev/workload-type
// label, S4), and the Kubernetes object it is made of.
type Kind struct {
	Path   string // "workspaces"
	Type   string // "Workspace"
	Object string // "Job" or "Deployment"
}

// The four native kinds.
var (
	Workspace   = Kind{Path: "workspaces", Type: "Workspace", Object: "Job"}
	Training    = Kind{Path: "trainings", Type: "Standard training", Object: "Job"}
	Distributed = Kind{Path: "distributed", Type: "Distributed training", Object: "Job"}
	Inference   = Kind{Path: "inferences", Type: "Custom inference", Object: "Deployment"}
	Kinds       = []Kind{Workspace, Training, Distributed, Inference}
)

// KindAt is the kind whose route has that path segment.
func KindAt(path string) (Kind, bool) {
	i := slices.IndexFunc(Kinds, func(k Kind) bool { return k.Path == path })
	if i < 0 {
		return Kind{}, false
	}
	return Kinds[i], true
}

// Suspendable says whether the kind can be stopped and run again (Run:ai's STOP and RUN): a Job
// by spec.suspend, a distributed training made as a PyTorchJob by spec.runPolicy.suspend. An inference is refused: scaling a Deployment to zero would end its record
// (a workload with no pods has finished), so it is stopped by deleting it.
func (k Kind) Suspendable() bool { return k.Object == "Job" }

// Request is the body of a submission, with Run:ai's field names. clusterId is accepted, so
// that Run:ai scripts work unchanged, and ignored: Arbiter schedules one cluster.
type Request struct {
	Name                 string `json:"name"`
	ProjectID            string `json:"projectId"`
	ClusterID            string `json:"clusterId"`
	UseGivenNameAsPrefix bool   `json:"useGivenNameAsPrefix"`
	Spec                 Spec   `json:"spec"`
}

// Spec is what runs. numWorkers is a distributed training's; servingPort and autoscaling an
// inference's.
type Spec struct {
	Image                string                `json:"image"`
	Command              string                `json:"command"`
	Args                 string                `json:"args"`
	EnvironmentVariables []EnvironmentVariable `json:"environmentVariables"`
	Compute              Compute               `json:"compute"`
	PriorityClass        string                `json:"priorityClass"`
	Preemptibility       string                `json:"preemptibility"`
	NodePools            []string              `json:"nodePools"`
	NumWorkers           *int                  `json:"numWorkers"`
	ServingPort          *ServingPort          `json:"servingPort"`
	Autoscaling          *Autoscaling          `json:"autoscaling"`
}

// EnvironmentVariable is one variable of the container.
type EnvironmentVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Compute is what each pod asks for.
type Compute struct {
	GPUDevicesRequest *int     `json:"gpuDevicesRequest"`
	CPUCoreRequest    *float64 `json:"cpuCoreRequest"`
	CPUMemoryRequest  string   `json:"cpuMemoryRequest"`
}

// ServingPort is the port an inference serves on.
type ServingPort struct {
	Container int    `json:"container"`
	Protocol  string `json:"protocol"`
}

// Autoscaling is an inference's replicas: Arbiter runs minReplicas (it has no autoscaler).
type Autoscaling struct {
	MinReplicas *int `json:"minReplicas"`
	MaxReplicas *int `json:"maxReplicas"`
}

// Accepted lists the fields of a request, for decoders that name them when refusing an
// unknown one.
var Accepted = []string{"name", "projectId", "clusterId", "useGivenNameAsPrefix", "spec"}

// Limits of what one submission may ask for.
const (
	MaxGPUsPerPod = 64
	MaxCPUCores   = 1024
	MaxWorkers    = 1000
	MaxReplicas   = 1000
	// MaxEnvironmentVariables and MaxEnvironmentValue bound spec.environmentVariables.
	MaxEnvironmentVariables = 100
	MaxEnvironmentValue     = 32 << 10
	// MaxMemory bounds spec.compute.cpuMemoryRequest, a pod's memory.
	MaxMemory = "16Ti"
	// maxPrefix leaves room for "-" and the 5-character suffix of a generated name, and a
	// distributed training's pod index, within a 63-character DNS label.
	maxPrefix = 52
	maxName   = 58
)

var maxMemory = resource.MustParse(MaxMemory)

// Workload is a checked submission: everything the objects are built from.
type Workload struct {
	Kind Kind
	// Name is the objects' name; when NamePrefix is set the caller adds a random suffix
	// (Named) before building.
	Name       string
	NamePrefix bool
	Namespace  string // the project's namespace, filled in by the caller
	Project    string // the project's name, filled in by the caller
	Image      string
	Command    []string
	Args       []string
	Env        []EnvironmentVariable
	GPUs       int64
	CPU        *resource.Quantity
	Memory     *resource.Quantity
	// Priority and Preemptibility are empty when the request leaves them to the workload
	// type's defaults (S7, S8): no label is written, and the scheduler resolves them.
	Priority       string
	Preemptibility string
	NodePools      []string // the requested pools' names; Pools their labels, filled in by the caller
	Pools          []Pool
	Workers        int32  // a distributed training's workers
	As             MadeAs // what a distributed training is made as (DistributedMadeAs), set by the caller
	Replicas       int32  // an inference's pods
	Port           int32  // an inference's serving port
	Submitter      string
	SchedulerName  string
}

// Pool is a node pool's node label, which the pods are required to match.
type Pool struct{ Name, LabelKey, LabelValue string }

// Pods is how many pods the workload runs: a distributed training's workers, and its master
// when it is made as a PyTorchJob.
func (w *Workload) Pods() int32 {
	switch w.Kind {
	case Distributed:
		if w.As == AsPyTorchJob {
			return w.Workers + 1
		}
		return w.Workers
	case Inference:
		return w.Replicas
	}
	return 1
}

// Named returns the workload with its final name: the name as given, or the prefix, a dash and
// suffix when the request asked for useGivenNameAsPrefix.
func (w Workload) Named(suffix string) Workload {
	if w.NamePrefix {
		w.Name, w.NamePrefix = w.Name+"-"+suffix, false
	}
	return w
}

// Parse checks a request for kind k into a Workload. Each refusal is a *FieldError naming the
// field as the request spells it, with what to send instead.
func Parse(k Kind, r Request) (Workload, error) {
	w := Workload{Kind: k, Name: r.Name, NamePrefix: r.UseGivenNameAsPrefix, Image: strings.TrimSpace(r.Spec.Image)}
	limit := maxName
	if r.UseGivenNameAsPrefix {
		limit = maxPrefix
	}
	if r.Name == "" {
		return w, invalid("name", "name is required: a lower-case DNS label such as %q", "train-resnet")
	}
	// A DNS-1035 label: the Service of a distributed training or an inference takes the name,
	// and Service names start with a letter.
	if errs := validation.IsDNS1035Label(r.Name); len(errs) > 0 || len(r.Name) > limit {
		return w, invalid("name", "name %q is not valid: use at most %d lower-case letters, digits and '-', starting with a letter and ending with a letter or digit", r.Name, limit)
	}
	if r.ProjectID == "" {
		return w, invalid("projectId", "projectId is required: the id of the project to submit to (GET /api/v1/org-unit/projects)")
	}
	s := r.Spec
	if w.Image == "" {
		return w, invalid("spec.image", "spec.image is required: the container image to run, such as %q", "python:3.12")
	}
	if strings.ContainsAny(w.Image, " \t\n") {
		return w, invalid("spec.image", "spec.image %q holds white space; give one image reference", w.Image)
	}
	var err error
	if w.Command, err = splitWords(s.Command); err != nil {
		return w, invalid("spec.command", "spec.command: %v", err)
	}
	if w.Args, err = splitWords(s.Args); err != nil {
		return w, invalid("spec.args", "spec.args: %v", err)
	}
	if err := checkEnv(s.EnvironmentVariables); err != nil {
		return w, err
	}
	w.Env = s.EnvironmentVariables
	if err := parseCompute(&w, s.Compute); err != nil {
		return w, err
	}
	w.Priority = s.PriorityClass
	switch s.Preemptibility {
	case "", preemptible, nonPreemptible, semiPreemptible:
		w.Preemptibility = s.Preemptibility
	default:
		return w, invalid("spec.preemptibility", "spec.preemptibility %q is not valid; use %q, %q or %q, or leave it out for the workload type's default",
			s.Preemptibility, preemptible, nonPreemptible, semiPreemptible)
	}
	for i, p := range s.NodePools {
		if p == "" || slices.Contains(s.NodePools[:i], p) {
			return w, invalid("spec.nodePools", "spec.nodePools must name distinct node pools; entry %d is %q", i, p)
		}
	}
	w.NodePools = s.NodePools
	return w, parseKindFields(&w, s)
}

func parseCompute(w *Workload, c Compute) error {
	if c.GPUDevicesRequest != nil {
		n := *c.GPUDevicesRequest
		if n < 0 || n > MaxGPUsPerPod {
			return invalid("spec.compute.gpuDevicesRequest", "spec.compute.gpuDevicesRequest must be a whole number of GPUs per pod from 0 to %d, not %d", MaxGPUsPerPod, n)
		}
		w.GPUs = int64(n)
	}
	if c.CPUCoreRequest != nil {
		v := *c.CPUCoreRequest
		if math.IsNaN(v) || v <= 0 || v > MaxCPUCores {
			return invalid("spec.compute.cpuCoreRequest", "spec.compute.cpuCoreRequest must be a number of cores above 0 and at most %d, such as 0.5", MaxCPUCores)
		}
		q := resource.NewMilliQuantity(int64(math.Ceil(v*1000)), resource.DecimalSI)
		w.CPU = q
	}
	if c.CPUMemoryRequest != "" {
		q, err := resource.ParseQuantity(c.CPUMemoryRequest)
		if err != nil || q.Sign() <= 0 {
			return invalid("spec.compute.cpuMemoryRequest", "spec.compute.cpuMemoryRequest %q is not a memory size; use a Kubernetes quantity such as %q or %q", c.CPUMemoryRequest, "512Mi", "20G")
		}
		if q.Cmp(maxMemory) > 0 {
			return invalid("spec.compute.cpuMemoryRequest", "spec.compute.cpuMemoryRequest %s is more than %s a pod; ask for less", c.CPUMemoryRequest, MaxMemory)
		}
		w.Memory = &q
	}
	return nil
}

// parseKindFields checks the fields only some kinds have: a distributed training's workers, an
// inference's port and replicas; any other kind given them is told which kind they belong to.
func parseKindFields(w *Workload, s Spec) error {
	if s.NumWorkers != nil && w.Kind != Distributed {
		return invalid("spec.numWorkers", "spec.numWorkers applies to distributed trainings only (POST /api/v1/workloads/distributed)")
	}
	if (s.ServingPort != nil || s.Autoscaling != nil) && w.Kind != Inference {
		field := "spec.servingPort"
		if s.ServingPort == nil {
			field = "spec.autoscaling"
		}
		return invalid(field, "%s applies to inferences only (POST /api/v1/workloads/inferences)", field)
	}
	switch w.Kind {
	case Distributed:
		if s.NumWorkers == nil {
			return invalid("spec.numWorkers", "spec.numWorkers is required for a distributed training: how many workers run together, 2 or more")
		}
		if n := *s.NumWorkers; n < 2 || n > MaxWorkers {
			return invalid("spec.numWorkers", "spec.numWorkers must be from 2 to %d, not %d (one pod is a standard training: POST /api/v1/workloads/trainings)", MaxWorkers, n)
		}
		w.Workers = int32(*s.NumWorkers)
	case Inference:
		if s.ServingPort == nil || s.ServingPort.Container == 0 {
			return invalid("spec.servingPort.container", "spec.servingPort.container is required for an inference: the port the container serves on, such as 8000")
		}
		if p := s.ServingPort.Container; p < 1 || p > 65535 {
			return invalid("spec.servingPort.container", "spec.servingPort.container must be a port from 1 to 65535, not %d", p)
		}
		switch strings.ToLower(s.ServingPort.Protocol) {
		case "", "http", "grpc":
		default:
			return invalid("spec.servingPort.protocol", "spec.servingPort.protocol %q is not supported; use %q or %q", s.ServingPort.Protocol, "http", "grpc")
		}
		w.Port = int32(s.ServingPort.Container)
		w.Replicas = 1
		if a := s.Autoscaling; a != nil && a.MinReplicas != nil {
			if n := *a.MinReplicas; n < 1 || n > MaxReplicas {
				return invalid("spec.autoscaling.minReplicas", "spec.autoscaling.minReplicas must be from 1 to %d, not %d", MaxReplicas, n)
			}
			w.Replicas = int32(*a.MinReplicas)
		}
		if a := s.Autoscaling; a != nil && a.MaxReplicas != nil && *a.MaxReplicas < int(w.Replicas) {
			return invalid("spec.autoscaling.maxReplicas", "spec.autoscaling.maxReplicas (%d) is below minReplicas (%d)", *a.MaxReplicas, w.Replicas)
		}
	}
	return nil
}

func checkEnv(vars []EnvironmentVariable) error {
	if len(vars) > MaxEnvironmentVariables {
		return invalid("spec.environmentVariables", "spec.environmentVariables holds %d variables; give at most %d", len(vars), MaxEnvironmentVariables)
	}
	seen := make(map[string]bool, len(vars))
	for i, v := range vars {
		if len(v.Value) > MaxEnvironmentValue {
			return invalid(fmt.Sprintf("spec.environmentVariables[%d].value", i), "the value of %s is %d bytes long; give at most %d (a ConfigMap or a mounted file carries more)", v.Name, len(v.Value), MaxEnvironmentValue)
		}
		field := fmt.Sprintf("spec.environmentVariables[%d].name", i)
		if errs := validation.IsEnvVarName(v.Name); v.Name == "" || len(errs) > 0 {
			return invalid(field, "%s %q is not a valid environment variable name: use letters, digits, '_', '-' and '.', not starting with a digit", field, v.Name)
		}
		if seen[v.Name] {
			return invalid(field, "%s: variable %s is given twice", field, v.Name)
		}
		seen[v.Name] = true
	}
	return nil
}

// splitWords splits a command line as a POSIX shell splits words, without expanding anything:
// white space separates words, single quotes keep everything, double quotes keep everything but
// a backslash before ", \ or $, and a backslash outside quotes keeps the next character. Run:ai
// sends command and args as strings; the container takes lists.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("a single quote at position %d is not closed", i)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`, s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if !closed {
				return nil, fmt.Errorf("a double quote is not closed")
			}
			inWord = true
		case ch == '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("it ends with a lone backslash")
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// FieldError refuses the value of one field of a request, named as the request spells it, with
// a sentence saying what to send instead.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Message }

func invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// The preemptibility values a request may give (scheduler.Preemptible, NonPreemptible,
// SemiPreemptible). Run:ai's API has the first two; semi-preemptible is Run:ai 3.0's label
// value, which Arbiter's scheduler honours (S26), accepted here too.
const (
	preemptible     = string(scheduler.Preemptible)
	nonPreemptible  = string(scheduler.NonPreemptible)
	semiPreemptible = string(scheduler.SemiPreemptible)
)

// Ref names a submitted workload's top owner in the cluster.
type Ref struct {
	UID, Namespace, Name string
	Object               string // "Job", "Deployment" or "PyTorchJob"
}
