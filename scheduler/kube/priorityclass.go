package kube

import (
	"context"
	"log/slog"
	"sync"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/arbiterhq/arbiter/scheduler"
)

// PriorityClass sync statuses (the OpenAPI schema Priority's clusterStatus).
const (
	Synced  = "Synced"
	Drifted = "Drifted"
	Unknown = "Unknown"
)

const managedByLabel = "app.kubernetes.io/managed-by"

// priorityClassSync keeps one PriorityClass per dictionary entry (S1): same name and value,
// preemptionPolicy Never (Arbiter, not the kubelet or kube-scheduler, decides preemption),
// labelled as Arbiter's. A value is immutable in Kubernetes, so a drifted class is deleted and
// created again.
type priorityClassSync struct {
	client kubernetes.Interface
	log    *slog.Logger

	mu       sync.Mutex
	want     map[string]int32
	observed map[string]*schedulingv1.PriorityClass
	notify   chan struct{}
}

func newPriorityClassSync(client kubernetes.Interface, log *slog.Logger) *priorityClassSync {
	return &priorityClassSync{client: client, log: log, want: map[string]int32{}, observed: map[string]*schedulingv1.PriorityClass{}, notify: make(chan struct{}, 1)}
}

func (p *priorityClassSync) watch(inf cache.SharedIndexInformer) error {
	set := func(obj any) {
		if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
			p.mu.Lock()
			p.observed[pc.Name] = pc
			drifted := p.want[pc.Name] != 0 && !matches(pc, p.want[pc.Name])
			p.mu.Unlock()
			if drifted {
				select {
				case p.notify <- struct{}{}:
				default:
				}
			}
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if pc, ok := tombstone[*schedulingv1.PriorityClass](obj); ok {
				p.mu.Lock()
				delete(p.observed, pc.Name)
				_, wanted := p.want[pc.Name]
				p.mu.Unlock()
				if wanted {
					select {
					case p.notify <- struct{}{}:
					default:
					}
				}
			}
		},
	})
	return err
}

func matches(pc *schedulingv1.PriorityClass, value int32) bool {
	return pc.Value == value && pc.PreemptionPolicy != nil && *pc.PreemptionPolicy == corev1.PreemptNever
}

// status is Synced when the cluster's class matches the dictionary, Drifted when it differs or
// is missing, Unknown before the first look.
func (p *priorityClassSync) status(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	value, wanted := p.want[name]
	if !wanted {
		return Unknown
	}
	pc, ok := p.observed[name]
	if !ok || !matches(pc, value) {
		return Drifted
	}
	return Synced
}

// sync makes the cluster's classes match the dictionary. A replica that does not act (a
// standby) only notes what is wanted, so that it reports drift too.
func (p *priorityClassSync) sync(ctx context.Context, dict []scheduler.Priority, acting func() bool) {
	p.mu.Lock()
	p.want = make(map[string]int32, len(dict))
	for _, d := range dict {
		p.want[d.Name] = d.Value
	}
	p.mu.Unlock()
	never := corev1.PreemptNever
	for _, d := range dict {
		if !acting() {
			return
		}
		p.mu.Lock()
		pc := p.observed[d.Name]
		p.mu.Unlock()
		if pc != nil && matches(pc, d.Value) {
			continue
		}
		if pc != nil {
			p.log.Warn("PriorityClass drifted from the dictionary; recreating it", "name", d.Name, "cluster", pc.Value, "dictionary", d.Value)
			if err := p.client.SchedulingV1().PriorityClasses().Delete(ctx, d.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				p.log.Warn("PriorityClass not deleted", "name", d.Name, "err", err)
				continue
			}
		}
		_, err := p.client.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
			ObjectMeta:       metav1.ObjectMeta{Name: d.Name, Labels: map[string]string{managedByLabel: "arbiter"}},
			Value:            d.Value,
			PreemptionPolicy: &never,
			Description:      "Arbiter workload priority " + d.Name + " (managed by Arbiter; edits are reverted)",
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			p.log.Warn("PriorityClass not created", "name", d.Name, "err", err)
		}
	}
}
