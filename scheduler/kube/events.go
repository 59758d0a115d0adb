package kube

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// eventWriter records Kubernetes events (core/v1) off the scheduling path, several at a time.
// client-go's record broadcaster writes one event at a time and drops what does not fit its
// queue of 1,000: binding 4,000 pods in a minute, it lost three Scheduled events in four.
// Arbiter already writes each event once (a pending reason when it changes, a warning once),
// so nothing here aggregates.
type eventWriter struct {
	client    kubernetes.Interface
	component string
	instance  string
	queue     chan *corev1.Event
	log       *slog.Logger
	acting    func() bool // asked again just before each write (Options.Acting)
}

// eventQueue bounds the events waiting to be written; beyond it events are dropped (and
// logged) rather than held in memory without limit while the API server is unreachable.
const eventQueue = 16384

func newEventWriter(client kubernetes.Interface, component, instance string, log *slog.Logger) *eventWriter {
	if instance == "" {
		host, _ := os.Hostname()
		instance = component + "-" + host
	}
	return &eventWriter{client: client, component: component, instance: instance, queue: make(chan *corev1.Event, eventQueue), log: log,
		acting: func() bool { return true }}
}

// run writes queued events with workers goroutines until ctx ends.
func (w *eventWriter) run(ctx context.Context, workers int) {
	startWorkers(ctx, workers, w.queue, func(ev *corev1.Event) { w.write(ctx, ev) })
}

func (w *eventWriter) write(ctx context.Context, ev *corev1.Event) {
	for attempt := 0; attempt < 3; attempt++ {
		if !w.acting() {
			return // queued by a leader that is no longer one: its successor speaks now
		}
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		_, err := w.client.CoreV1().Events(ev.Namespace).Create(callCtx, ev, metav1.CreateOptions{})
		cancel()
		if err == nil || ctx.Err() != nil {
			return
		}
		w.log.Debug("event not written; retrying", "reason", ev.Reason, "object", ev.InvolvedObject.Name, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(attempt+1) * 500 * time.Millisecond):
		}
	}
}

// emit queues an event on an object without waiting.
func (w *eventWriter) emit(o ownerRef, eventType, reason, message string) {
	ev := w.event(o, eventType, reason, message, time.Now())
	select {
	case w.queue <- ev:
	default:
		w.log.Warn("event dropped: too many waiting to be written", "reason", reason, "object", o.Namespace+"/"+o.Name)
	}
}

// event is an event on an object that happened at at.
func (w *eventWriter) event(o ownerRef, eventType, reason, message string, at time.Time) *corev1.Event {
	now := time.Now()
	ns := o.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", o.Name, now.UnixNano()), Namespace: ns},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID,
		},
		Reason: reason, Message: message, Type: eventType, Count: 1,
		FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at),
		Source:              corev1.EventSource{Component: w.component},
		ReportingController: w.component, ReportingInstance: w.instance,
	}
	return ev
}
