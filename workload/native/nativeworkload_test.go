package native

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func base() Request {
	return Request{Name: "train-a", ProjectID: "p1", Spec: Spec{Image: "python:3.12", Compute: Compute{GPUDevicesRequest: ptr.To(2)}}}
}

func TestParseRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  Kind
		edit  func(r *Request)
		field string
		want  string
	}{
		{"no name", Training, func(r *Request) { r.Name = "" }, "name", "name is required"},
		{"upper case", Training, func(r *Request) { r.Name = "Train" }, "name", `name "Train" is not valid`},
		{"starts with a digit", Inference, func(r *Request) { r.Name = "1st" }, "name", "starting with a letter"},
		{"too long", Training, func(r *Request) { r.Name = strings.Repeat("a", 59) }, "name", "at most 58"},
		{"prefix too long", Training, func(r *Request) { r.Name, r.UseGivenNameAsPrefix = strings.Repeat("a", 53), true }, "name", "at most 52"},
		{"no project", Training, func(r *Request) { r.ProjectID = "" }, "projectId", "projectId is required"},
		{"no image", Workspace, func(r *Request) { r.Spec.Image = " " }, "spec.image", "spec.image is required"},
		{"image with space", Workspace, func(r *Request) { r.Spec.Image = "a b" }, "spec.image", "white space"},
		{"open quote", Training, func(r *Request) { r.Spec.Command = `python -c 'print(1)` }, "spec.command", "single quote at position 10 is not closed"},
		{"lone backslash", Training, func(r *Request) { r.Spec.Args = `a \` }, "spec.args", "lone backslash"},
		{"env name", Training, func(r *Request) { r.Spec.EnvironmentVariables = []EnvironmentVariable{{Name: "1X"}} }, "spec.environmentVariables[0].name", "not a valid environment variable name"},
		{"env twice", Training, func(r *Request) {
			r.Spec.EnvironmentVariables = []EnvironmentVariable{{Name: "A"}, {Name: "A"}}
		}, "spec.environmentVariables[1].name", "given twice"},
		{"negative GPUs", Training, func(r *Request) { r.Spec.Compute.GPUDevicesRequest = ptr.To(-1) }, "spec.compute.gpuDevicesRequest", "from 0 to 64, not -1"},
		{"zero CPU", Training, func(r *Request) { r.Spec.Compute.CPUCoreRequest = ptr.To(0.0) }, "spec.compute.cpuCoreRequest", "above 0"},
		{"memory", Training, func(r *Request) { r.Spec.Compute.CPUMemoryRequest = "lots" }, "spec.compute.cpuMemoryRequest", `"lots" is not a memory size`},
		{"memory bound", Training, func(r *Request) { r.Spec.Compute.CPUMemoryRequest = "17Ti" }, "spec.compute.cpuMemoryRequest", "more than 16Ti a pod"},
		{"preemptibility", Training, func(r *Request) { r.Spec.Preemptibility = "maybe" }, "spec.preemptibility", `"maybe" is not valid`},
		{"too many variables", Training, func(r *Request) {
			r.Spec.EnvironmentVariables = make([]EnvironmentVariable, MaxEnvironmentVariables+1)
		}, "spec.environmentVariables", "give at most 100"},
		{"long value", Training, func(r *Request) {
			r.Spec.EnvironmentVariables = []EnvironmentVariable{{Name: "A", Value: strings.Repeat("x", MaxEnvironmentValue+1)}}
		}, "spec.environmentVariables[0].value", "give at most 32768"},
		{"pool twice", Training, func(r *Request) { r.Spec.NodePools = []string{"a", "a"} }, "spec.nodePools", "distinct"},
		{"workers on a training", Training, func(r *Request) { r.Spec.NumWorkers = ptr.To(2) }, "spec.numWorkers", "distributed trainings only"},
		{"port on a workspace", Workspace, func(r *Request) { r.Spec.ServingPort = &ServingPort{Container: 80} }, "spec.servingPort", "inferences only"},
		{"no workers", Distributed, func(r *Request) {}, "spec.numWorkers", "required for a distributed training"},
		{"one worker", Distributed, func(r *Request) { r.Spec.NumWorkers = ptr.To(1) }, "spec.numWorkers", "from 2 to 1000, not 1"},
		{"no port", Inference, func(r *Request) {}, "spec.servingPort.container", "required for an inference"},
		{"bad port", Inference, func(r *Request) { r.Spec.ServingPort = &ServingPort{Container: 70000} }, "spec.servingPort.container", "from 1 to 65535"},
		{"protocol", Inference, func(r *Request) { r.Spec.ServingPort = &ServingPort{Container: 80, Protocol: "udp"} }, "spec.servingPort.protocol", "not supported"},
		{"replicas", Inference, func(r *Request) {
			r.Spec.ServingPort, r.Spec.Autoscaling = &ServingPort{Container: 80}, &Autoscaling{MinReplicas: ptr.To(0)}
		}, "spec.autoscaling.minReplicas", "from 1 to 1000, not 0"},
		{"max below min", Inference, func(r *Request) {
			r.Spec.ServingPort, r.Spec.Autoscaling = &ServingPort{Container: 80}, &Autoscaling{MinReplicas: ptr.To(3), MaxReplicas: ptr.To(2)}
		}, "spec.autoscaling.maxReplicas", "below minReplicas (3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			tc.edit(&r)
			_, err := Parse(tc.kind, r)
			if err == nil {
				t.Fatal("accepted")
			}
			fe, ok := err.(*FieldError)
			if !ok || fe.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("refusal = %T %+v, want field %q with %q", err, err, tc.field, tc.want)
			}
		})
	}
}

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		"":                           nil,
		"python":                     {"python"},
		"  -x   my-script.py ":       {"-x", "my-script.py"},
		`sh -c 'echo "hi there"; x'`: {"sh", "-c", `echo "hi there"; x`},
		`a "b \"c\" \$d \e" f\ g`:    {"a", `b "c" $d \e`, "f g"},
		`''`:                         {""},
	} {
		got, err := splitWords(in)
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestObjects builds each kind and checks what the scheduler and the cluster read of it.
func TestObjects(t *testing.T) {
	parse := func(k Kind, edit func(r *Request)) Workload {
		t.Helper()
		r := base()
		r.Spec.Command, r.Spec.Args = "python", "-x 'my script.py'"
		r.Spec.EnvironmentVariables = []EnvironmentVariable{{Name: "EPOCHS", Value: "3"}}
		r.Spec.Compute.CPUCoreRequest, r.Spec.Compute.CPUMemoryRequest = ptr.To(0.5), "20M"
		edit(&r)
		w, err := Parse(k, r)
		if err != nil {
			t.Fatal(err)
		}
		w.Namespace, w.Project, w.Submitter, w.SchedulerName = "team-a", "team-a", "alice", "arbiter-x"
		return w
	}
	checkPod := func(t *testing.T, s corev1.PodSpec) {
		t.Helper()
		c := s.Containers[0]
		if s.SchedulerName != "arbiter-x" || c.Image != "python:3.12" || !cmp.Equal(c.Command, []string{"python"}) ||
			!cmp.Equal(c.Args, []string{"-x", "my script.py"}) || len(c.Env) != 1 || c.Env[0].Value != "3" {
			t.Errorf("pod spec = %+v", s)
		}
		gpu := c.Resources.Limits["nvidia.com/gpu"]
		cpu, mem := c.Resources.Requests[corev1.ResourceCPU], c.Resources.Requests[corev1.ResourceMemory]
		if gpu.Value() != 2 || cpu.MilliValue() != 500 || mem.String() != "20M" {
			t.Errorf("resources = %+v", c.Resources)
		}
	}

	t.Run("semi-preemptible", func(t *testing.T) {
		w := parse(Distributed, func(r *Request) { r.Spec.NumWorkers, r.Spec.Preemptibility = ptr.To(3), "semi-preemptible" })
		if got := w.Objects().Job.Labels["kai.scheduler/preemptibility"]; got != "semi-preemptible" {
			t.Errorf("label = %q", got)
		}
	})

	t.Run("training", func(t *testing.T) {
		w := parse(Training, func(r *Request) { r.Spec.PriorityClass, r.Spec.Preemptibility = "high", "non-preemptible" })
		o := w.Objects()
		j := o.Job
		if j == nil || o.Deployment != nil || o.Service != nil {
			t.Fatalf("objects = %+v", o)
		}
		want := map[string]string{"arbiter.dev/workload-type": "standard-training", "arbiter.dev/project": "team-a",
			"priorityClassName": "high", "kai.scheduler/preemptibility": "non-preemptible"}
		if diff := cmp.Diff(want, j.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if j.Annotations["arbiter.dev/submitted-by"] != "alice" || j.Name != "train-a" || j.Namespace != "team-a" {
			t.Errorf("meta = %+v", j.ObjectMeta)
		}
		if *j.Spec.Parallelism != 1 || *j.Spec.BackoffLimit != 0 || j.Spec.PodFailurePolicy == nil || j.Spec.CompletionMode != nil {
			t.Errorf("job spec = %+v", j.Spec)
		}
		if j.Spec.Template.Labels["arbiter.dev/project"] != "team-a" || j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("template = %+v", j.Spec.Template)
		}
		checkPod(t, j.Spec.Template.Spec)
	})
	t.Run("workspace without priority: the type's defaults", func(t *testing.T) {
		o := parse(Workspace, func(*Request) {}).Objects()
		if _, ok := o.Job.Labels["priorityClassName"]; ok || o.Job.Labels["arbiter.dev/workload-type"] != "workspace" {
			t.Errorf("labels = %v", o.Job.Labels)
		}
		if _, ok := o.Job.Labels["kai.scheduler/preemptibility"]; ok {
			t.Errorf("labels = %v", o.Job.Labels)
		}
	})
	t.Run("distributed", func(t *testing.T) {
		w := parse(Distributed, func(r *Request) { r.Spec.NumWorkers = ptr.To(4) })
		w.Pools = []Pool{{Name: "a100", LabelKey: "pool", LabelValue: "a100"}, {Name: "h100", LabelKey: "gpu", LabelValue: "h100"}}
		o := w.Objects()
		j := o.Job
		if *j.Spec.Parallelism != 4 || *j.Spec.Completions != 4 || *j.Spec.CompletionMode != batchv1.IndexedCompletion ||
			j.Annotations["arbiter.dev/min-members"] != "4" || j.Labels["arbiter.dev/workload-type"] != "distributed-training" {
			t.Errorf("job = %+v %+v", j.ObjectMeta, j.Spec)
		}
		if j.Spec.Template.Spec.Subdomain != "train-a" || o.Service == nil || o.Service.Spec.ClusterIP != corev1.ClusterIPNone ||
			o.Service.Spec.Selector[batchv1.JobNameLabel] != "train-a" || o.Service.Name != "train-a" {
			t.Errorf("service = %+v, subdomain %q", o.Service, j.Spec.Template.Spec.Subdomain)
		}
		terms := j.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) != 2 || terms[1].MatchExpressions[0].Key != "gpu" || terms[1].MatchExpressions[0].Values[0] != "h100" {
			t.Errorf("affinity = %+v", terms)
		}
		checkPod(t, j.Spec.Template.Spec)
	})
	t.Run("inference", func(t *testing.T) {
		w := parse(Inference, func(r *Request) {
			r.Spec.ServingPort, r.Spec.Autoscaling = &ServingPort{Container: 8000}, &Autoscaling{MinReplicas: ptr.To(2), MaxReplicas: ptr.To(5)}
		})
		w.Pools = []Pool{{Name: "default"}}
		o := w.Objects()
		d := o.Deployment
		if o.Job != nil || d == nil || *d.Spec.Replicas != 2 || d.Labels["arbiter.dev/workload-type"] != "custom-inference" ||
			d.Annotations["arbiter.dev/submitted-by"] != "alice" {
			t.Fatalf("deployment = %+v", o)
		}
		if d.Spec.Selector.MatchLabels["arbiter.dev/workload"] != "train-a" || d.Spec.Template.Labels["arbiter.dev/workload"] != "train-a" {
			t.Errorf("selector %v, pod labels %v", d.Spec.Selector, d.Spec.Template.Labels)
		}
		if d.Spec.Template.Spec.Affinity != nil {
			t.Errorf("the default pool (no label) lifts the restriction: %+v", d.Spec.Template.Spec.Affinity)
		}
		if p := o.Service.Spec.Ports; len(p) != 1 || p[0].Port != 8000 || p[0].TargetPort.IntVal != 8000 || o.Service.Spec.ClusterIP == corev1.ClusterIPNone {
			t.Errorf("service = %+v", o.Service.Spec)
		}
		checkPod(t, d.Spec.Template.Spec)
	})
	t.Run("name as prefix", func(t *testing.T) {
		w := parse(Training, func(r *Request) { r.UseGivenNameAsPrefix = true }).Named("x7k2p")
		if o := w.Objects(); o.Job.Name != "train-a-x7k2p" {
			t.Errorf("name = %q", o.Job.Name)
		}
	})
}
