package native

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

// TestDistributedTrainingIsAPyTorchJobWhenTheClusterServesOne: a distributed training is made
// as training-operator's PyTorchJob when the cluster serves that CRD, else as an indexed Job;
// each says why in the words the Submit page and the answer show.
func TestDistributedTrainingIsAPyTorchJobWhenTheClusterServesOne(t *testing.T) {
	for served, want := range map[bool]MadeAs{
		true:  {Object: "PyTorchJob", APIGroup: "kubeflow.org", Reason: "PyTorchJob: the cluster runs Kubeflow training-operator"},
		false: {Object: "Job", APIGroup: "batch", Reason: "indexed Job: no PyTorchJob CRD is served"},
	} {
		if diff := cmp.Diff(want, DistributedMadeAs(served)); diff != "" {
			t.Errorf("served %v (-want +got):\n%s", served, diff)
		}
	}
}

// pyTorchJobJSON is a PyTorchJob as training-operator v1.9 reads it (kubeflow.org/v1's JSON
// field names: pkg/apis/kubeflow.org/v1 PyTorchJob, ReplicaSpec, RunPolicy), with only the
// fields Arbiter writes.
type pyTorchJobJSON struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		RunPolicy struct {
			Suspend *bool `json:"suspend"`
		} `json:"runPolicy"`
		PyTorchReplicaSpecs map[string]replicaSpecJSON `json:"pytorchReplicaSpecs"`
	} `json:"spec"`
}

type replicaSpecJSON struct {
	Replicas      *int32 `json:"replicas"`
	RestartPolicy string `json:"restartPolicy"`
	Template      struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			SchedulerName string `json:"schedulerName"`
			RestartPolicy string `json:"restartPolicy"`
			Containers    []struct {
				Name      string   `json:"name"`
				Image     string   `json:"image"`
				Command   []string `json:"command"`
				Resources struct {
					Requests map[string]string `json:"requests"`
					Limits   map[string]string `json:"limits"`
				} `json:"resources"`
			} `json:"containers"`
		} `json:"spec"`
	} `json:"template"`
}

// TestPyTorchJobOfADistributedTraining: made as a PyTorchJob, a distributed training is a
// Master of one pod and a Worker of numWorkers pods, each pod with the GPUs asked, Arbiter's
// scheduler name and the labels the scheduler reads, in the project's namespace with its
// submitter; its gang is every pod, and no Service is made (the controller makes its own).
func TestPyTorchJobOfADistributedTraining(t *testing.T) {
	r := base()
	r.Spec.NumWorkers, r.Spec.PriorityClass, r.Spec.Command = ptr.To(3), "high", "torchrun train.py"
	w, err := Parse(Distributed, r)
	if err != nil {
		t.Fatal(err)
	}
	w.Namespace, w.Project, w.Submitter, w.SchedulerName, w.As = "team-a", "team-a", "alice", "arbiter-x", AsPyTorchJob
	o := w.Objects()
	if o.PyTorchJob == nil || o.Job != nil || o.Service != nil || o.Deployment != nil {
		t.Fatalf("objects = %+v, want a PyTorchJob alone", o)
	}
	if w.Pods() != 4 {
		t.Errorf("pods = %d, want the master and 3 workers", w.Pods())
	}
	raw, err := json.Marshal(o.PyTorchJob.Object)
	if err != nil {
		t.Fatal(err)
	}
	var got pyTorchJobJSON
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	var want pyTorchJobJSON
	want.APIVersion, want.Kind = "kubeflow.org/v1", "PyTorchJob"
	want.Metadata.Name, want.Metadata.Namespace = "train-a", "team-a"
	want.Metadata.Labels = map[string]string{"arbiter.dev/workload-type": "distributed-training", "arbiter.dev/project": "team-a", "priorityClassName": "high"}
	want.Metadata.Annotations = map[string]string{"arbiter.dev/submitted-by": "alice"}
	want.Spec.RunPolicy.Suspend = ptr.To(false)
	replica := func(n int32) replicaSpecJSON {
		var s replicaSpecJSON
		s.Replicas, s.RestartPolicy = &n, "OnFailure"
		s.Template.Metadata.Labels = map[string]string{"arbiter.dev/workload-type": "distributed-training", "arbiter.dev/project": "team-a"}
		s.Template.Spec.SchedulerName = "arbiter-x"
		s.Template.Spec.Containers = make([]struct {
			Name      string   `json:"name"`
			Image     string   `json:"image"`
			Command   []string `json:"command"`
			Resources struct {
				Requests map[string]string `json:"requests"`
				Limits   map[string]string `json:"limits"`
			} `json:"resources"`
		}, 1)
		c := &s.Template.Spec.Containers[0]
		c.Name, c.Image, c.Command = "pytorch", "python:3.12", []string{"torchrun", "train.py"}
		c.Resources.Requests = map[string]string{"nvidia.com/gpu": "2"}
		c.Resources.Limits = map[string]string{"nvidia.com/gpu": "2"}
		return s
	}
	want.Spec.PyTorchReplicaSpecs = map[string]replicaSpecJSON{"Master": replica(1), "Worker": replica(3)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PyTorchJob (-want +got):\n%s", diff)
	}
}
