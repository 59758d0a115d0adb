package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/scheduler"
)

// kindsCluster is a local control plane with one node of 8 GPUs and Arbiter's scheduler
// running against it, its project "team" (namespace ns) in suspend mode. No controller of the
// custom resources runs: the test plays their part (making pods, deleting them when
// suspended).
type kindsCluster struct {
	ctx    context.Context
	config *rest.Config
	client kubernetes.Interface
	dyn    dynamic.Interface
	sched  *Scheduler
}

func startKindsCluster(t *testing.T) *kindsCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	dir, err := os.MkdirTemp("", "arbiter-kinds-") // short: the control plane's sockets live there
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: dir, Nodes: "kinds=1x8"})
	if err != nil {
		t.Fatalf("local control plane: %v", err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = cluster.Stop(stopCtx)
	})
	dyn, err := dynamic.NewForConfig(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	settings := foreseeSettings()
	settings.Projects[0].Policy.PreemptionMode = scheduler.Suspend
	s, err := New(Options{SchedulerName: "arbiter", Config: cluster.RESTConfig(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		LoadSettings: func(context.Context) (*Settings, error) { return settings, nil }})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the scheduler ended with %v", err)
		}
	})
	k := &kindsCluster{ctx: ctx, config: cluster.RESTConfig(), client: cluster.Client(), dyn: dyn, sched: s}
	if _, err := k.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return k
}

// installCRD installs a CustomResourceDefinition from testdata/crds.
func (k *kindsCluster) installCRD(t *testing.T, file string) {
	t.Helper()
	u := readTestdata(t, filepath.Join("crds", file))
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := k.dyn.Resource(crds).Create(k.ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// create creates a controller's object from testdata/kinds, its switch at path turned off, once
// its CustomResourceDefinition is established.
func (k *kindsCluster) create(t *testing.T, file string, gvr schema.GroupVersionResource, path ...string) *unstructured.Unstructured {
	t.Helper()
	u := readKind(t, file)
	u.SetUID("")
	if err := unstructured.SetNestedField(u.Object, false, path...); err != nil {
		t.Fatal(err)
	}
	var created *unstructured.Unstructured
	poll.UntilNil(t, u.GetKind()+" is served", time.Minute, func() (err error) {
		created, err = k.dyn.Resource(gvr).Namespace("ns").Create(k.ctx, u, metav1.CreateOptions{})
		return err
	})
	return created
}

// pod creates one of Arbiter's pods of gpus GPUs, controlled by owner (nil: a bare pod).
func (k *kindsCluster) pod(t *testing.T, name string, gpus int64, owner *unstructured.Unstructured, labels map[string]string) *corev1.Pod {
	t.Helper()
	var ref *metav1.OwnerReference
	if owner != nil {
		r := controllerRef(owner.GetAPIVersion(), owner.GetKind(), owner.GetName(), string(owner.GetUID()))
		ref = &r
	}
	p := gpuPod(name, "", gpus, ref)
	p.CreationTimestamp, p.Labels = metav1.Time{}, labels
	c := &p.Spec.Containers[0]
	c.Image = "busybox"
	c.Resources.Limits = corev1.ResourceList{resourceGPU: c.Resources.Requests[resourceGPU]} // GPUs are asked by their limit
	created, err := k.client.CoreV1().Pods("ns").Create(k.ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

func (k *kindsCluster) deletePod(t *testing.T, name string) {
	t.Helper()
	zero := int64(0)
	if err := k.client.CoreV1().Pods("ns").Delete(k.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
}

func (k *kindsCluster) bound(names ...string) error {
	for _, name := range names {
		p, err := k.client.CoreV1().Pods("ns").Get(k.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Spec.NodeName == "" {
			return fmt.Errorf("pod %s is not bound", name)
		}
	}
	return nil
}

// readTestdata decodes a YAML object from testdata, integers as int64 as a client decodes them.
func readTestdata(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return u
}

// TestS20_KindsOnTheLocalControlPlane: on a real API server, with the kinds' definitions
// installed after Arbiter started, each kind is watched and gives its workload its gang, and a
// PyTorchJob in a suspend-mode project is suspended through its run policy for urgent work and
// resumed once the room is free again.
func TestS20_KindsOnTheLocalControlPlane(t *testing.T) {
	k := startKindsCluster(t)
	for _, f := range []string{"pytorchjobs.yaml", "mpijobs.yaml", "jobsets.yaml", "trainjobs.yaml", "rayclusters.yaml"} {
		k.installCRD(t, f)
	}
	pytorchjobs := schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}

	t.Run("a PyTorchJob is suspended and resumed whole", func(t *testing.T) {
		job := k.create(t, "pytorchjob.yaml", pytorchjobs, "spec", "runPolicy", "suspend")
		// Its controller makes its master and three workers.
		names := []string{"torch-master-0", "torch-worker-0", "torch-worker-1", "torch-worker-2"}
		for i, name := range names {
			k.pod(t, name, map[bool]int64{true: 1, false: 2}[i == 0], job, nil)
		}
		poll.UntilNil(t, "the PyTorchJob's gang is bound", time.Minute, func() error { return k.bound(names...) })

		k.pod(t, "urgent", 4, nil, map[string]string{LabelPriority: "high"})
		switchOf := func() (bool, string) {
			got, err := k.dyn.Resource(pytorchjobs).Namespace("ns").Get(k.ctx, job.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			on, _, _ := unstructured.NestedBool(got.Object, "spec", "runPolicy", "suspend")
			return on, got.GetAnnotations()[AnnotationSuspendedBy]
		}
		poll.UntilNil(t, "the PyTorchJob is suspended by Arbiter", time.Minute, func() error {
			if on, by := switchOf(); !on || by == "" {
				return fmt.Errorf("spec.runPolicy.suspend %v, suspended by %q", on, by)
			}
			return nil
		})
		for _, name := range names { // as its controller does once it is suspended
			k.deletePod(t, name)
		}
		poll.UntilNil(t, "the urgent pod is bound", time.Minute, func() error { return k.bound("urgent") })
		if on, _ := switchOf(); !on {
			t.Fatal("the PyTorchJob was resumed while the urgent pod holds its room")
		}
		k.deletePod(t, "urgent")
		poll.UntilNil(t, "the PyTorchJob is resumed", time.Minute, func() error {
			if on, by := switchOf(); on || by != "" {
				return fmt.Errorf("spec.runPolicy.suspend %v, suspended by %q", on, by)
			}
			return nil
		})
	})

	t.Run("each kind is watched once installed, with its gang", func(t *testing.T) {
		cases := []struct {
			file string
			gvr  schema.GroupVersionResource
			path []string
			gang int
		}{
			{"mpijob-v1.yaml", schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "mpijobs"}, []string{"spec", "runPolicy", "suspend"}, 3},
			{"jobset.yaml", schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}, []string{"spec", "suspend"}, 13},
			{"trainjob.yaml", schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainjobs"}, []string{"spec", "suspend"}, 2},
			{"raycluster.yaml", schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}, []string{"spec", "suspend"}, 6},
		}
		for _, tc := range cases {
			obj := k.create(t, tc.file, tc.gvr, tc.path...)
			k.pod(t, obj.GetName()+"-0", 0, obj, nil)
			poll.UntilNil(t, obj.GetKind()+" is its pod's workload with its gang", time.Minute, func() error {
				r := k.sched.Last()
				if r == nil {
					return errors.New("no cycle yet")
				}
				w, _ := r.Workload(string(obj.GetUID()))
				if w == nil {
					return fmt.Errorf("no workload under %s %s", obj.GetKind(), obj.GetUID())
				}
				if gang, _ := scheduler.ResolveGangSize(w); w.Kind != obj.GetKind() || gang != tc.gang {
					return fmt.Errorf("workload of kind %s, gang %d; want %s, gang %d", w.Kind, gang, obj.GetKind(), tc.gang)
				}
				return nil
			})
		}
	})

	// A scheduler starting now finds the kinds installed before it from one discovery, not a
	// request for each kind's group and version.
	t.Run("a start asks discovery once for every kind", func(t *testing.T) {
		var requests atomic.Int32
		cfg := rest.CopyConfig(k.config)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				requests.Add(1)
				return rt.RoundTrip(r)
			})
		})
		s, err := New(Options{SchedulerName: "arbiter", Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		served := s.servedAtStart()
		asked := requests.Load()
		want := map[schema.GroupVersionResource]bool{
			{Group: "batch", Version: "v1", Resource: "jobs"}:                                true,
			{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}:                  true,
			{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}:             true,
			{Group: "ray.io", Version: "v1", Resource: "rayclusters"}:                        true,
			{Group: "kubeflow.org", Version: "v1", Resource: "tfjobs"}:                       false, // not in the definition installed
			{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}: false, // not installed
		}
		for _, kind := range watchedOwners {
			served(kind.GVR)
		}
		for gvr, w := range want {
			if got := served(gvr); got != w {
				t.Errorf("served(%s) = %v, want %v", gvr, got, w)
			}
		}
		if n := requests.Load(); n != asked || asked > 3 {
			t.Errorf("discovery made %d requests, and looking up every watched kind %d more; want at most 3 in all (the API server's aggregated discovery: /api and /apis)", asked, n-asked)
		}
	})
}
