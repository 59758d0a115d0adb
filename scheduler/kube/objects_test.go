package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Every informer drops field managers before caching an object, whatever form the object has.
func TestInformersDropManagedFields(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"}}
	u.SetManagedFields(managed)
	objs := []metav1.Object{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: managed}},
		&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "d", ManagedFields: managed}},
		u,
	}
	for _, obj := range objs {
		got, err := dropManagedFields(obj)
		if err != nil {
			t.Fatalf("%T: %v", obj, err)
		}
		if m := got.(metav1.Object).GetManagedFields(); len(m) != 0 {
			t.Errorf("%T keeps its managed fields: %v", obj, m)
		}
	}
}
