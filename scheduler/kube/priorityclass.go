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
// created again. The aliases of S7 (KAI's and older Run:ai's class names) are kept too, with
// their entry's value, because Kubernetes admission refuses a pod whose spec.priorityClassName
// names a class that does not exist; but an alias class that is not Arbiter's (KAI's own, in a
// cluster where KAI runs too) is left as it is: Arbiter reads the name, not the value, and
// taking it over would fight KAI's installation.
type priorityClassSync struct {
	client kubernetes.Interface
	log    *slog.Logger

	mu       sync.Mutex
	want     map[string]wantedClass
	observed map[string]*schedulingv1.PriorityClass
	foreign  map[string]bool // alias classes left to their owner, logged once
	notify   chan struct{}
}

// wantedClass is a PriorityClass Arbiter keeps: a dictionary entry's, or an alias's (alias is
// the entry it stands for).
type wantedClass struct {
	value int32
	alias string // "" for a dictionary entry
}

func newPriorityClassSync(client kubernetes.Interface, log *slog.Logger) *priorityClassSync {
	return &priorityClassSync{client: client, log: log, want: map[string]wantedClass{}, observed: map[string]*schedulingv1.PriorityClass{},
		foreign: map[string]bool{}, notify: make(chan struct{}, 1)}
}

func (p *priorityClassSync) watch(inf cache.SharedIndexInformer) error {
	set := func(obj any) {
		if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
			p.mu.Lock()
			p.observed[pc.Name] = pc
			want, wanted := p.want[pc.Name]
			drifted := wanted && !matches(pc, want.value) && !leftToOwner(pc, want)
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

// leftToOwner reports whether pc is an alias class someone else keeps (not labelled as
// Arbiter's): Arbiter neither corrects nor replaces it.
func leftToOwner(pc *schedulingv1.PriorityClass, want wantedClass) bool {
	return want.alias != "" && pc.Labels[managedByLabel] != "arbiter"
}

// status is Synced when the cluster's class matches the dictionary, Drifted when it differs or
// is missing, Unknown before the first look.
func (p *priorityClassSync) status(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	want, wanted := p.want[name]
	if !wanted {
		return Unknown
	}
	pc, ok := p.observed[name]
	if !ok || !matches(pc, want.value) {
		return Drifted
	}
	return Synced
}

// sync makes the cluster's classes match the dictionary and its aliases. A replica that does
// not act (a standby) only notes what is wanted, so that it reports drift too.
func (p *priorityClassSync) sync(ctx context.Context, dict []scheduler.Priority, acting func() bool) {
	names := make([]string, 0, len(dict))
	want := make(map[string]wantedClass, len(dict))
	for _, d := range dict {
		names = append(names, d.Name)
		want[d.Name] = wantedClass{value: d.Value}
	}
	for _, a := range scheduler.PriorityAliases() {
		entry, ok := want[a.Entry]
		if _, taken := want[a.Name]; !ok || taken || entry.alias != "" {
			continue // its entry is not in the dictionary, or the dictionary has the name itself
		}
		names = append(names, a.Name)
		want[a.Name] = wantedClass{value: entry.value, alias: a.Entry}
	}
	p.mu.Lock()
	p.want = want
	p.mu.Unlock()
	never := corev1.PreemptNever
	for _, name := range names {
		if !acting() {
			return
		}
		w := want[name]
		p.mu.Lock()
		pc := p.observed[name]
		foreign := pc != nil && leftToOwner(pc, w)
		logged := p.foreign[name]
		p.foreign[name] = foreign
		p.mu.Unlock()
		if pc != nil && matches(pc, w.value) {
			continue
		}
		if foreign {
			if !logged {
				p.log.Info("PriorityClass of a KAI or Run:ai name is not Arbiter's; leaving it as it is (Arbiter reads the name as its alias)",
					"name", name, "cluster", pc.Value, "entry", w.alias)
			}
			continue
		}
		if pc != nil {
			p.log.Warn("PriorityClass drifted from the dictionary; recreating it", "name", name, "cluster", pc.Value, "dictionary", w.value)
			if err := p.client.SchedulingV1().PriorityClasses().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				p.log.Warn("PriorityClass not deleted", "name", name, "err", err)
				continue
			}
		}
		description := "Arbiter workload priority " + name + " (managed by Arbiter; edits are reverted)"
		if w.alias != "" {
			description = "KAI's and Run:ai's priority class " + name + ", which Arbiter reads as its priority " + w.alias +
				" (managed by Arbiter; edits are reverted)"
		}
		_, err := p.client.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
			ObjectMeta:       metav1.ObjectMeta{Name: name, Labels: map[string]string{managedByLabel: "arbiter"}},
			Value:            w.value,
			PreemptionPolicy: &never,
			Description:      description,
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			p.log.Warn("PriorityClass not created", "name", name, "err", err)
		}
	}
}
