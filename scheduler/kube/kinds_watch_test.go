package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/scheduler"
)

// TestS4_EachServedKindIsWatched: the kinds the API server serves are watched and become top
// owners with their gang (S5): training-operator's MPIJob at kubeflow.org/v1 (mpi-operator
// serves v2beta1), a JobSet, a TrainJob.
func TestS4_EachServedKindIsWatched(t *testing.T) {
	cases := []struct {
		file string
		gvr  schema.GroupVersionResource
		list string
		gang int
	}{
		{"mpijob-v1.yaml", schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "mpijobs"}, "MPIJobList", 3},
		{"jobset.yaml", schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}, "JobSetList", 13},
		{"trainjob.yaml", schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainjobs"}, "TrainJobList", 2},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			obj := readKind(t, tc.file)
			dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{tc.gvr: tc.list}, obj)
			client := fake.NewClientset()
			client.Resources = []*metav1.APIResourceList{{GroupVersion: tc.gvr.GroupVersion().String(),
				APIResources: []metav1.APIResource{{Name: tc.gvr.Resource, Kind: obj.GetKind(), Namespaced: true}}}}
			s := &Scheduler{client: client, dynamic: dyn, cache: NewCache("arbiter"), ownerWatched: map[schema.GroupVersionResource]bool{}}
			f := ownerFactories{
				typed:    informers.NewSharedInformerFactory(client, 0),
				metadata: metadatainformer.NewSharedInformerFactory(metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme()), 0),
				dynamic:  dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0),
			}
			if err := s.watchOwners(ctx, f, s.servedAtStart()); err != nil {
				t.Fatal(err)
			}
			ref := controllerRef(obj.GetAPIVersion(), obj.GetKind(), obj.GetName(), string(obj.GetUID()))
			s.cache.UpsertPod(gpuPod(obj.GetName()+"-0", "p1", 1, &ref))
			poll.UntilNil(t, obj.GetKind()+" is the pod's top owner with its gang", 10*time.Second, func() error {
				w, _ := cycleView(s.cache, t0.Add(time.Hour), foreseeSettings()).Workload(string(obj.GetUID()))
				if w == nil {
					return fmt.Errorf("no workload %s", obj.GetUID())
				}
				if gang, _ := scheduler.ResolveGangSize(w); w.Kind != obj.GetKind() || gang != tc.gang {
					return fmt.Errorf("workload of kind %q, gang %d; want %s, gang %d (its owner not watched)", w.Kind, gang, obj.GetKind(), tc.gang)
				}
				return nil
			})
		})
	}
}
