package web

import (
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// historyQuery is what Run:ai's workload history takes: offset and limit, no filter or order
// (it is oldest first).
var historyQuery = listquery.Spec{Paged: true}

// historyRecord is one of Run:ai's HistoryRecords: an event, or a change of phase.
type historyRecord struct {
	Meta historyMeta       `json:"meta"`
	Spec historyRecordSpec `json:"spec"`
}

type historyMeta struct {
	CreationTimestamp time.Time `json:"creationTimestamp"`
	Type              string    `json:"type"` // Event or PhaseUpdate
}

type historyRecordSpec struct {
	Event       *historyEvent `json:"event,omitempty"`
	PhaseUpdate *phaseUpdate  `json:"phaseUpdate,omitempty"`
}

// historyEvent is Run:ai's Event, without its id (Run:ai's is a UUID, Arbiter's event ids are
// integers: they are kind, reason and actor here, under Arbiter's names).
type historyEvent struct {
	ID             string               `json:"id"` // as the events route answers it
	CreatedAt      time.Time            `json:"createdAt"`
	Type           string               `json:"type"`
	ClusterID      string               `json:"clusterId"`
	Message        string               `json:"message"`
	Reason         string               `json:"reason"`
	Source         string               `json:"source"`
	InvolvedObject views.InvolvedObject `json:"involvedObject"`
	Kind           string               `json:"kind"`
	Actor          string               `json:"actor"`
}

type phaseUpdate struct {
	Phase        string `json:"phase"`
	PhaseMessage string `json:"phaseMessage"`
}

// workloadHistory is Run:ai's GET /workloads/{workloadId}/history: the workload's events,
// oldest first, each followed by the phase it put the workload in when it changed it (every
// kind but a change of priority or preemptibility), paged by offset and limit. An event yields
// one or two records, so a page needs no more than offset+limit+1 events: no more are read.
func (h *workloadReads) workloadHistory(c echo.Context) error {
	q, err := listquery.Parse(c.QueryParams(), historyQuery)
	if err != nil {
		return err
	}
	w, err := visibleWorkload(c, h.service)
	if err != nil {
		return err
	}
	read := q.Offset + q.Limit + 1
	if read < q.Offset { // past the integers: every event
		read = math.MaxInt64
	}
	evs, err := h.service.FirstEvents(c.Request().Context(), w, read)
	if err != nil {
		return err
	}
	records := []historyRecord{}
	for _, e := range evs {
		ev := runAIWorkloadEvent(workloadEventView(e), w.Record, clusterID(c))
		records = append(records, historyRecord{Meta: historyMeta{CreationTimestamp: e.At.UTC(), Type: "Event"},
			Spec: historyRecordSpec{Event: &historyEvent{ID: ev.ID, CreatedAt: ev.CreatedAt, Type: ev.Type, ClusterID: ev.ClusterID, Message: e.Message,
				Reason: e.Reason, Source: ev.Source, InvolvedObject: ev.InvolvedObject, Kind: e.Kind, Actor: e.Actor}}})
		if phase, ok := phaseAfter(e); ok {
			records = append(records, historyRecord{Meta: historyMeta{CreationTimestamp: e.At.UTC(), Type: "PhaseUpdate"},
				Spec: historyRecordSpec{PhaseUpdate: &phaseUpdate{Phase: phase, PhaseMessage: e.Message}}})
		}
	}
	records, next := listquery.Next(q, records[min(q.Offset, len(records)):])
	answer := map[string]any{"records": records}
	if next != nil {
		answer["next"] = *next
	}
	return c.JSON(http.StatusOK, answer)
}

// phaseAfter is the phase, in Run:ai's enum, an event of kind e.Kind puts a workload in, and
// whether the kind changes the phase at all (store.RunAIPhase says the same of a record).
// Arbiter suspends a Job until it is admitted (the scheduler's Suspended): it is Pending; a
// person's stop is Stopped. A preempted or reclaimed workload waits to come back (Pending); one
// that cannot ends with a Failed event.
func phaseAfter(e store.WorkloadEvent) (string, bool) {
	if !slices.Contains(store.PhaseEventKinds, e.Kind) {
		return "", false
	}
	switch e.Kind {
	case "Admitted":
		return "Running", true
	case "Completed", "Failed":
		return e.Kind, true
	case "Suspended":
		if e.Actor != "" && e.Actor != "scheduler" {
			return "Stopped", true
		}
	}
	return "Pending", true
}
