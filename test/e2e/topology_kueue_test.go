package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
)

// TestS29_KueueTopologyDryRunNamesTheRackTheJobLandsIn: on a control plane of its own (the
// Topology definition it installs would be every test's), Kueue's Topology definition as Kueue
// publishes it is installed after Arbiter started, and a Topology racks (block, rack,
// hostname) created. An 8-pod Job manifest requiring one rack in Kueue's spelling is dry-run
// through Workloads V2: the answer names the topology racks, the rack level and the domain,
// the fuller rack by best fit (four of its GPUs are taken). Submitted for real, all its pods
// land in that rack.
func TestS29_KueueTopologyDryRunNamesTheRackTheJobLandsIn(t *testing.T) {
	t.Parallel()
	c := ownCluster(t)
	e := newEnvOn(t, c, 4, 8)
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "scheduler", "kube", "testdata", "crds", "kueue-topologies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
		t.Fatal(err)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(e.ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	levels := []any{}
	for _, l := range devcluster.TopologyLevels {
		levels = append(levels, map[string]any{"nodeLabel": l})
	}
	racks := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology",
		"metadata": map[string]any{"name": "racks"}, "spec": map[string]any{"levels": levels}}}
	kueue := schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "topologies"}
	poll.UntilNil(t, "Kueue's Topology is served", time.Minute, func() error {
		_, err := dyn.Resource(kueue).Create(e.ctx, racks, metav1.CreateOptions{})
		return err
	})

	ns := e.project("train", 32, store.PolicyUpdate{})
	proj, err := e.store.ProjectNamed(e.ctx, "train-"+e.id)
	if err != nil {
		t.Fatal(err)
	}
	e.job(jobSpec{name: "in-rack-0", namespace: ns, pods: 4, labels: labels("high", "non-preemptible")}, e.onNode(0))
	e.eventually("four GPUs of rack 0 are taken", time.Minute, func() bool { return e.running(ns, "in-rack-0") == 4 })

	manifest := `{"apiVersion":"batch/v1","kind":"Job","spec":{"parallelism":8,"completions":8,"template":{
		"metadata":{"annotations":{"` + kueueRequired + `":"` + devcluster.LabelTopologyRack + `"}},
		"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"example.invalid/run:1","command":["sleep","infinity"],
		"resources":{"limits":{"nvidia.com/gpu":1},"requests":{"cpu":"100m"}}}]}}}}`
	body := fmt.Sprintf(`{"metadata":{"name":"eight","projectId":%q},"manifest":%s}`, proj.ID, manifest)
	pool := devcluster.Pool{Name: e.pool.Name}
	want := map[string]any{"podSet": "", "topology": "racks", "level": devcluster.LabelTopologyRack,
		"domain": pool.Block(0) + "/" + pool.Rack(0), "required": true}
	var answer map[string]any
	// Arbiter watches Kueue's Topology kind once it is served; until the next cycle sees the
	// object, the level is read as a label no topology lists.
	poll.UntilNil(t, "the dry run names the rack by Kueue's topology", time.Minute, func() error {
		status, m := e.a.do(t, "POST", "/api/v2/workloads?dryRun=true", body)
		answer = m
		if status != 200 {
			t.Fatalf("dry run = %d %v", status, m)
		}
		if got, _ := m["topology"].([]any); len(got) != 1 || !mapsEqual(got[0], want) {
			return fmt.Errorf("the dry run's topology is %v, want [%v]", m["topology"], want)
		}
		return nil
	})
	if answer["outcome"] != "start-now" {
		t.Errorf("the dry run's outcome is %v, want start-now", answer["outcome"])
	}

	if status, m := e.a.do(t, "POST", "/api/v2/workloads", body); status != 202 {
		t.Fatalf("submitting the Job = %d %v", status, m)
	}
	e.eventually("the Job's eight pods run", 2*time.Minute, func() bool { return e.running(ns, "eight") == 8 })
	if got, want := e.racksOf(ns, "eight"), []string{pool.Rack(0)}; !slices.Equal(got, want) {
		t.Errorf("the Job's pods are in racks %v; the dry run said %v", got, want)
	}
}

// mapsEqual compares a decoded JSON object with want.
func mapsEqual(got any, want map[string]any) bool {
	m, ok := got.(map[string]any)
	if !ok || len(m) != len(want) {
		return false
	}
	for k, v := range want {
		if m[k] != v {
			return false
		}
	}
	return true
}
