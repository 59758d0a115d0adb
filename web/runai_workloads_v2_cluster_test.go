package web_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/workload/native"
	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The cluster edge of Workloads V2 for the web tests: what the API asked to be created, read
// and deleted (test/e2e submits to the real API server).

func (f *fakeCluster) SchedulerName() string { return "arbiter" }

func (f *fakeCluster) SubmitManifest(_ context.Context, _ schema.GroupVersionResource, obj *unstructured.Unstructured) (native.Ref, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.exists[obj.GetName()] {
		return native.Ref{}, time.Time{}, existsError{}
	}
	obj = obj.DeepCopy()
	obj.SetUID(types.UID(uuid.NewString()))
	f.manifests = append(f.manifests, obj)
	return native.Ref{UID: string(obj.GetUID()), Namespace: obj.GetNamespace(), Name: obj.GetName(), Object: obj.GetKind()}, time.Now(), nil
}

func (f *fakeCluster) ManifestObject(_ context.Context, _ schema.GroupVersionResource, r native.Ref) (*unstructured.Unstructured, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.manifests, func(o *unstructured.Unstructured) bool { return string(o.GetUID()) == r.UID })
	if i < 0 || slices.ContainsFunc(f.deleted, func(d native.Ref) bool { return d.UID == r.UID }) {
		return nil, notFoundError{}
	}
	return f.manifests[i].DeepCopy(), nil
}

func (f *fakeCluster) DeleteManifest(_ context.Context, _ schema.GroupVersionResource, r native.Ref) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, r)
	return nil
}

// manifestCount is how many manifests were created.
func (f *fakeCluster) manifestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.manifests)
}

func (f *fakeCluster) lastManifest(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.manifests) == 0 {
		t.Fatal("no manifest was created")
	}
	return f.manifests[len(f.manifests)-1]
}
