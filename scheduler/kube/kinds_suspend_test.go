package kube

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
)

// TestS20_EachKindIsSuspendedByItsOwnSwitch: in suspend mode Arbiter flips the kind's own
// switch on the top owner and marks it as its suspension; resuming flips it back and takes the
// mark away. Kubeflow's jobs have spec.runPolicy.suspend, the others spec.suspend.
func TestS20_EachKindIsSuspendedByItsOwnSwitch(t *testing.T) {
	cases := []struct {
		file     string
		resource string
		path     []string
	}{
		{"pytorchjob.yaml", "pytorchjobs", []string{"spec", "runPolicy", "suspend"}},
		{"mpijob-v1.yaml", "mpijobs", []string{"spec", "runPolicy", "suspend"}},
		{"jobset.yaml", "jobsets", []string{"spec", "suspend"}},
		{"trainjob.yaml", "trainjobs", []string{"spec", "suspend"}},
		{"raycluster.yaml", "rayclusters", []string{"spec", "suspend"}},
		{"rayjob.yaml", "rayjobs", []string{"spec", "suspend"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			ctx := context.Background()
			obj := readKind(t, tc.file)
			if err := unstructured.SetNestedField(obj.Object, false, tc.path...); err != nil {
				t.Fatal(err)
			}
			gv, _ := schema.ParseGroupVersion(obj.GetAPIVersion())
			gvr := gv.WithResource(tc.resource)
			dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: obj.GetKind() + "List"}, obj)
			s := &Scheduler{dynamic: dyn, cache: NewCache("arbiter")}
			ref := ownerFrom(obj).ref()
			for _, suspend := range []bool{true, false} {
				if err := s.setSuspended(ctx, ref, suspend); err != nil {
					t.Fatalf("suspend %v: %v", suspend, err)
				}
				got, err := dyn.Resource(gvr).Namespace("ns").Get(ctx, obj.GetName(), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				on, _, _ := unstructured.NestedBool(got.Object, tc.path...)
				_, marked := got.GetAnnotations()[AnnotationSuspendedBy]
				if on != suspend || marked != suspend {
					t.Errorf("after suspend=%v: switch %v, marked %v", suspend, on, marked)
				}
				if o := ownerFrom(got); o.Suspended != suspend || arbiterSuspended(o) != suspend {
					t.Errorf("after suspend=%v the cache reads suspended %v, by Arbiter %v", suspend, o.Suspended, arbiterSuspended(o))
				}
			}
		})
	}
}
