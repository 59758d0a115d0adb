package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/store"
)

var gadgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}

// ensureGadgetCRD installs the CustomResourceDefinition of Gadget, a kind Arbiter knows
// nothing of (no controller: the test makes its pods).
func ensureGadgetCRD(e *env) dynamic.Interface {
	e.t.Helper()
	dyn, err := dynamic.NewForConfig(sharedCluster(e.t).RESTConfig())
	if err != nil {
		e.t.Fatal(err)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crdGVR).Create(e.ctx, crd, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		e.t.Fatal(err)
	}
	e.eventually("the Gadget kind is served", time.Minute, func() bool {
		_, err := dyn.Resource(gadgets).Namespace("default").List(e.ctx, metav1.ListOptions{})
		return err == nil
	})
	return dyn
}

// TestBrowserUnknownKindIsGroupedUnderItsOwner: the pods of a kind Arbiter does not know are
// one workload under their owner, started all or nothing over the pods that exist (S5's
// fallback), and the workload's page says which rule grouped them.
func TestBrowserUnknownKindIsGroupedUnderItsOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("gadget", 4, store.PolicyUpdate{})
	dyn := ensureGadgetCRD(e)
	g := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g", "namespace": ns}}}
	created, err := dyn.Resource(gadgets).Namespace(ns).Create(e.ctx, g, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uid := string(created.GetUID())
	yes := true
	owner := &metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Gadget", Name: "g", UID: created.GetUID(), Controller: &yes}
	// The pods are made one by one, and a cycle between two of them would see a gang of the
	// pods made so far (as a controller's would): the node is cordoned until all three exist.
	node := devcluster.Pool{Name: e.pool.Name}.NodeName(0)
	cordon := func(on bool) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)
		if _, err := e.client.CoreV1().Nodes().Patch(e.ctx, node, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cordon(true)
	names := []string{"g-0", "g-1", "g-2"}
	for _, name := range names {
		gpuPod(e, name, ns, owner)
	}
	e.eventually("the Gadget is one workload of its 3 pods", 30*time.Second, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, uid)
		return err == nil && r.Gang == 3
	})
	cordon(false)
	e.eventually("the Gadget waits as a gang of its 3 pods for 2 GPUs", 30*time.Second, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, uid)
		return err == nil && r.Kind == "Gadget" && r.Gang == 3 && r.Reason == "InsufficientCapacity"
	})
	if n := e.podsBound(ns, names...); n != 0 {
		t.Fatalf("%d of the Gadget's pods bound, want none: its gang is the pods that exist", n)
	}

	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, e.a)
	err = chromedp.Do(ctx,
		chromedp.Navigate(e.a.URL+"/workloads/"+uid),
		chromedp.WaitVisible(`#pods-grouping`),
	)
	if err != nil {
		t.Fatalf("open the Gadget's page: %v", err)
	}
	grouping, err := chromedp.Run(ctx, chromedp.Text(`#pods-grouping`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "workload-story-unknown-kind")
	if want := "Grouped by owner Gadget/g (kind not known: gang = the 3 pods that exist)."; grouping != want {
		t.Errorf("the page says %q, want %q", grouping, want)
	}

	// One pod goes: the two left are the gang, and fit.
	if err := e.client.CoreV1().Pods(ns).Delete(e.ctx, "g-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the two pods left start together", time.Minute, func() bool { return e.podsBound(ns, "g-0", "g-1") == 2 })
}
