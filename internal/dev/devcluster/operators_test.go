package devcluster

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// The operator tests share one cluster running every operator, started by the first of them
// (the cluster of TestMain runs none, as most users' clusters do).
var operatorCluster struct {
	once sync.Once
	c    *Cluster
	dir  string
	err  error
}

func clusterWithOperators(t *testing.T) *Cluster {
	t.Helper()
	operatorCluster.once.Do(func() {
		dir, err := os.MkdirTemp("", "devcluster-operators-test-")
		if err != nil {
			operatorCluster.err = err
			return
		}
		operatorCluster.dir = dir
		start := time.Now()
		operatorCluster.c, operatorCluster.err = Start(context.Background(), Options{
			Dir: dir, Operators: AllOperators, Progress: os.Stderr, Timeout: 4 * time.Minute,
		})
		if operatorCluster.err == nil {
			fmt.Fprintf(os.Stderr, "devcluster: cluster with operators %s ready in %s\n",
				strings.Join(AllOperators, ","), time.Since(start).Round(10*time.Millisecond))
		}
	})
	if operatorCluster.err != nil {
		t.Fatalf("starting a cluster with operators: %v", operatorCluster.err)
	}
	return operatorCluster.c
}

// stopOperatorCluster stops the operators' cluster if a test started it.
func stopOperatorCluster(ctx context.Context) error {
	if operatorCluster.dir == "" {
		return nil
	}
	defer os.RemoveAll(operatorCluster.dir)
	if operatorCluster.c == nil {
		return nil
	}
	pids := operatorCluster.c.PIDs()
	if err := operatorCluster.c.Stop(ctx); err != nil {
		return err
	}
	for name, pid := range pids {
		if pidAlive(pid) {
			return fmt.Errorf("%s (pid %d) still running after Stop", name, pid)
		}
	}
	return nil
}

// createFromYAML creates the object of manifest (YAML) in namespace ns.
func createFromYAML(t *testing.T, c *Cluster, gvr schema.GroupVersionResource, ns, manifest string) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	u, err := dyn.Resource(gvr).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s: %v", gvr.Resource, err)
	}
	return u
}

// ownedBy reports whether meta has a controller owner reference to u.
func ownedBy(meta metav1.Object, u *unstructured.Unstructured) bool {
	ref := metav1.GetControllerOf(meta)
	return ref != nil && ref.UID == u.GetUID()
}

// checkMadeBy fails the test for each pod not controlled by u (a kind named kind) or not
// naming nothingScheduler, the scheduler its object's pod template names.
func checkMadeBy(t *testing.T, pods []corev1.Pod, u *unstructured.Unstructured, kind string) {
	t.Helper()
	checkSchedulerName(t, pods)
	for _, p := range pods {
		if !ownedBy(&p, u) {
			t.Errorf("pod %s is not controlled by the %s", p.Name, kind)
		}
	}
}

// checkSchedulerName fails the test for each pod that does not name nothingScheduler, the
// scheduler its object's pod template names.
func checkSchedulerName(t *testing.T, pods []corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		if p.Spec.SchedulerName != nothingScheduler {
			t.Errorf("pod %s names scheduler %q, want its template's %q", p.Name, p.Spec.SchedulerName, nothingScheduler)
		}
	}
}

// waitPods waits until the pods of selector in ns are exactly want (by name) and returns them.
func waitPods(t *testing.T, c *Cluster, ns, selector string, want ...string) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	poll.UntilNil(t, fmt.Sprintf("pods %v (%s) exist", want, selector), 60*time.Second, func() error {
		list, err := c.Client().CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		var names []string
		for _, p := range list.Items {
			names = append(names, p.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			return fmt.Errorf("pods %v", names)
		}
		pods = list.Items
		return nil
	})
	return pods
}

var (
	jobSetGVR       = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	lwsGVR          = schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}
	pyTorchJobGVR   = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}
	rayClusterGVR   = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
	trainJobGVR     = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainjobs"}
	trainRuntimeGVR = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainingruntimes"}
)

// nothingScheduler is the schedulerName of the tests' pod templates: no scheduler by this name
// runs, so the pods stay Pending and the tests look at what the controllers create.
const nothingScheduler = "arbiter-test"

// A JobSet is defaulted by its webhook (the controller needs a success policy) and its
// controller creates one Job per replica of each replicated job; the Jobs' pods pass the
// JobSet pod webhooks.
func TestJobSetControllerCreatesItsJobs(t *testing.T) {
	c := clusterWithOperators(t)
	ns := testNamespace(t, c.Client())
	js := createFromYAML(t, c, jobSetGVR, ns, `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 1
        completions: 1
        template:
          spec:
            schedulerName: `+nothingScheduler+`
            restartPolicy: Never
            containers: [{name: main, image: busybox}]
`)
	if op, _, _ := unstructured.NestedString(js.Object, "spec", "successPolicy", "operator"); op != "All" {
		t.Errorf("the JobSet's success policy operator is %q, want the webhook's default All", op)
	}
	poll.UntilNil(t, "the JobSet's two Jobs exist", 60*time.Second, func() error {
		jobs, err := c.Client().BatchV1().Jobs(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "jobset.sigs.k8s.io/jobset-name=train"})
		if err != nil {
			return err
		}
		var names []string
		for _, j := range jobs.Items {
			if !ownedBy(&j, js) {
				return fmt.Errorf("job %s is not controlled by the JobSet", j.Name)
			}
			names = append(names, j.Name)
		}
		slices.Sort(names)
		if want := []string{"train-workers-0", "train-workers-1"}; !slices.Equal(names, want) {
			return fmt.Errorf("jobs %v, want %v", names, want)
		}
		return nil
	})
	var jobPods []corev1.Pod
	poll.UntilNil(t, "the Jobs' two pods pass the JobSet pod webhooks", 60*time.Second, func() error {
		pods, err := c.Client().CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "jobset.sigs.k8s.io/jobset-name=train"})
		if err != nil {
			return err
		}
		if len(pods.Items) != 2 {
			return fmt.Errorf("%d pods", len(pods.Items))
		}
		jobPods = pods.Items
		return nil
	})
	checkSchedulerName(t, jobPods)
}

// A LeaderWorkerSet's controller creates the leaders' StatefulSet and each group's workers'
// StatefulSet; its pod webhook gives every pod of a group the group's labels.
func TestLeaderWorkerSetControllerCreatesGroupsWithLabels(t *testing.T) {
	c := clusterWithOperators(t)
	ns := testNamespace(t, c.Client())
	lws := createFromYAML(t, c, lwsGVR, ns, `
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: serve}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 3
    workerTemplate:
      spec:
        schedulerName: `+nothingScheduler+`
        containers: [{name: main, image: busybox}]
`)
	poll.UntilNil(t, "the leaders' StatefulSet exists", 60*time.Second, func() error {
		sts, err := c.Client().AppsV1().StatefulSets(ns).Get(context.Background(), "serve", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !ownedBy(sts, lws) {
			return fmt.Errorf("StatefulSet serve is not controlled by the LeaderWorkerSet")
		}
		return nil
	})
	// The leader's pod, then the workers' StatefulSet (serve-0) and its pods.
	pods := waitPods(t, c, ns, "leaderworkerset.sigs.k8s.io/name=serve", "serve-0", "serve-0-1", "serve-0-2")
	checkSchedulerName(t, pods)
	groupKey := pods[0].Labels["leaderworkerset.sigs.k8s.io/group-key"]
	if groupKey == "" {
		t.Errorf("pod %s has no group-key label: %v", pods[0].Name, pods[0].Labels)
	}
	for _, p := range pods {
		workerIndex := strings.TrimPrefix(strings.TrimPrefix(p.Name, "serve-0"), "-")
		if workerIndex == "" {
			workerIndex = "0" // the leader
		}
		want := map[string]string{
			"leaderworkerset.sigs.k8s.io/group-index":  "0",
			"leaderworkerset.sigs.k8s.io/worker-index": workerIndex,
			"leaderworkerset.sigs.k8s.io/group-key":    groupKey,
		}
		for key, v := range want {
			if got := p.Labels[key]; got != v {
				t.Errorf("pod %s label %s = %q, want %q (set by the LWS pod webhook)", p.Name, key, got, v)
			}
		}
	}
}

// A PyTorchJob's controller (training-operator) creates its master and worker pods.
func TestPyTorchJobControllerCreatesItsPods(t *testing.T) {
	c := clusterWithOperators(t)
	ns := testNamespace(t, c.Client())
	job := createFromYAML(t, c, pyTorchJobGVR, ns, `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mnist}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          schedulerName: `+nothingScheduler+`
          containers: [{name: pytorch, image: pytorch/pytorch}]
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          schedulerName: `+nothingScheduler+`
          containers: [{name: pytorch, image: pytorch/pytorch}]
`)
	pods := waitPods(t, c, ns, "training.kubeflow.org/job-name=mnist", "mnist-master-0", "mnist-worker-0", "mnist-worker-1")
	checkMadeBy(t, pods, job, "PyTorchJob")
}

// A RayCluster's controller (KubeRay) creates its head pod and its worker group's pods.
func TestRayClusterControllerCreatesHeadAndWorkers(t *testing.T) {
	c := clusterWithOperators(t)
	ns := testNamespace(t, c.Client())
	rc := createFromYAML(t, c, rayClusterGVR, ns, `
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: ray}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        schedulerName: `+nothingScheduler+`
        containers: [{name: ray-head, image: rayproject/ray}]
  workerGroupSpecs:
  - groupName: gpu
    replicas: 2
    minReplicas: 2
    maxReplicas: 2
    rayStartParams: {}
    template:
      spec:
        schedulerName: `+nothingScheduler+`
        containers: [{name: ray-worker, image: rayproject/ray}]
`)
	var heads, workers int
	var rayPods []corev1.Pod
	poll.UntilNil(t, "the RayCluster's head and two workers exist", 60*time.Second, func() error {
		list, err := c.Client().CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "ray.io/cluster=ray"})
		if err != nil {
			return err
		}
		heads, workers = 0, 0
		for _, p := range list.Items {
			if !ownedBy(&p, rc) {
				return fmt.Errorf("pod %s is not controlled by the RayCluster", p.Name)
			}
			switch p.Labels["ray.io/node-type"] {
			case "head":
				heads++
			case "worker":
				workers++
			}
		}
		if heads != 1 || workers != 2 {
			return fmt.Errorf("%d head and %d worker pods", heads, workers)
		}
		rayPods = list.Items
		return nil
	})
	checkSchedulerName(t, rayPods)
}

// A TrainJob's controller (Trainer) creates a JobSet from its runtime, and the JobSet
// controller that JobSet's Jobs, whose pods name the scheduler the runtime names.
func TestTrainJobControllerCreatesItsJobSet(t *testing.T) {
	c := clusterWithOperators(t)
	ns := testNamespace(t, c.Client())
	createFromYAML(t, c, trainRuntimeGVR, ns, `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: torch-minimal}
spec:
  mlPolicy:
    numNodes: 2
    torch: {}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                schedulerName: `+nothingScheduler+`
                containers: [{name: node, image: pytorch/pytorch}]
`)
	tj := createFromYAML(t, c, trainJobGVR, ns, `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: finetune}
spec:
  runtimeRef: {name: torch-minimal, apiGroup: trainer.kubeflow.org, kind: TrainingRuntime}
`)
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	poll.UntilNil(t, "the TrainJob's JobSet exists", 60*time.Second, func() error {
		js, err := dyn.Resource(jobSetGVR).Namespace(ns).Get(context.Background(), "finetune", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !ownedBy(js, tj) {
			return fmt.Errorf("JobSet finetune is not controlled by the TrainJob")
		}
		return nil
	})
	poll.UntilNil(t, "the JobSet's Job exists", 60*time.Second, func() error {
		_, err := c.Client().BatchV1().Jobs(ns).Get(context.Background(), "finetune-node-0", metav1.GetOptions{})
		return err
	})
	// The runtime's pod template is how a TrainJob's pods name their scheduler.
	job, err := c.Client().BatchV1().Jobs(ns).Get(context.Background(), "finetune-node-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := job.Spec.Template.Spec.SchedulerName; got != nothingScheduler {
		t.Errorf("the Job's pods name scheduler %q, want the runtime's %q", got, nothingScheduler)
	}
}
