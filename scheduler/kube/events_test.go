package kube

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
)

// TestS23_EveryEventWritten: a burst of events far beyond client-go's broadcaster queue (4,000
// binds at once) is written whole, on the object it names.
func TestS23_EveryEventWritten(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	var written atomic.Int64
	var first atomic.Pointer[corev1.Event]
	client.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ev := a.(k8stesting.CreateAction).GetObject().(*corev1.Event)
		first.CompareAndSwap(nil, ev)
		written.Add(1)
		return true, ev, nil
	})
	w := newEventWriter(client, "arbiter", "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	const n = 4000
	for i := range n {
		name := fmt.Sprintf("job-%d", i)
		w.emit(ownerRef{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: name, UID: types.UID(name)}, "Normal", EventScheduled, "Successfully assigned ns/"+name+" to n1")
	}
	w.run(ctx, 8)
	poll.UntilNil(t, "every event is written", 30*time.Second, func() error {
		if got := written.Load(); got < n {
			return fmt.Errorf("%d of %d events written", got, n)
		}
		return nil
	})
	if ev := first.Load(); ev.Reason != EventScheduled || ev.InvolvedObject.Kind != "Pod" || ev.Namespace != "ns" || ev.Source.Component != "arbiter" || ev.Count != 1 {
		t.Errorf("event = %+v", ev)
	}
}
