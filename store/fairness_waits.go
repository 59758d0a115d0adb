package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// MaxLedgerWorkloads bounds the workloads one fairness ledger reads: a project's workloads
// that lived during the period, the most recently queued first.
const MaxLedgerWorkloads = 2000

// maxLedgerEvents bounds the events read with them (Admitted, Preempted, Reclaimed).
const maxLedgerEvents = 20000

// LedgerWorkload is one of a project's workloads as the fairness ledger reads it: when it was
// queued and finished, what it asks for, its waiting reason now, and its admissions and
// evictions up to the period's end (oldest first).
type LedgerWorkload struct {
	UID, Name  string
	QueuedAt   time.Time
	FinishedAt *time.Time
	GPUs, Gang int
	Reason     string // its waiting reason now ("" once it started)
	Events     []LedgerEvent
}

// LedgerEvent is an admission or an eviction; PreemptorProject names the project of the
// workload that preempted or reclaimed it, as that workload recorded it.
type LedgerEvent struct {
	At               time.Time
	Kind             string
	PreemptorProject string
}

// LedgerWorkloads are the project's workloads that lived during [from, to): queued before to
// and not finished before from, at most MaxLedgerWorkloads (more says some were left out),
// with their Admitted, Preempted and Reclaimed events before to.
func (s *Store) LedgerWorkloads(ctx context.Context, project uuid.UUID, from, to time.Time) (out []LedgerWorkload, more bool, err error) {
	if !to.After(from) {
		return nil, false, InvalidField("to", "the period's end (%s) must come after its start (%s)", to.UTC().Format(time.RFC3339), from.UTC().Format(time.RFC3339))
	}
	type row struct {
		UID        string     `db:"uid"`
		Name       string     `db:"name"`
		QueuedAt   time.Time  `db:"queued_at"`
		FinishedAt *time.Time `db:"finished_at"`
		GPUs       int        `db:"requested_gpus"`
		Gang       int        `db:"gang"`
		Reason     string     `db:"reason"`
	}
	rows, err := s.pool.Query(ctx, `SELECT uid, namespace || '/' || name AS name, queued_at, finished_at, requested_gpus, gang, reason
		FROM workloads
		WHERE project_id = $1 AND queued_at < $3 AND (finished_at IS NULL OR finished_at > $2)
		ORDER BY queued_at DESC, uid LIMIT $4`, project, from, to, MaxLedgerWorkloads+1)
	ws, err := scanAll[row](rows, err)
	if err != nil {
		return nil, false, err
	}
	if len(ws) > MaxLedgerWorkloads {
		ws, more = ws[:MaxLedgerWorkloads], true
	}
	uids := make([]string, len(ws))
	index := make(map[string]int, len(ws))
	for i, w := range ws {
		uids[i], index[w.UID] = w.UID, i
		out = append(out, LedgerWorkload{UID: w.UID, Name: w.Name, QueuedAt: w.QueuedAt, FinishedAt: w.FinishedAt,
			GPUs: w.GPUs, Gang: w.Gang, Reason: w.Reason})
	}
	if len(uids) == 0 {
		return out, more, nil
	}
	type eventRow struct {
		UID       string    `db:"workload_uid"`
		At        time.Time `db:"at"`
		Kind      string    `db:"kind"`
		Preemptor string    `db:"preemptor_project"`
	}
	rows, err = s.pool.Query(ctx, `SELECT e.workload_uid, e.at, e.kind, coalesce(p.project_name, '') AS preemptor_project
		FROM workload_events e
		LEFT JOIN workloads p ON p.uid = nullif(e.preemptor_uid, '')
		WHERE e.workload_uid = ANY($1) AND e.kind IN ('Admitted', 'Preempted', 'Reclaimed') AND e.at < $2
		ORDER BY e.at, e.id LIMIT $3`, uids, to, maxLedgerEvents)
	events, err := scanAll[eventRow](rows, err)
	if err != nil {
		return nil, false, err
	}
	if len(events) == maxLedgerEvents {
		more = true
	}
	for _, e := range events {
		w := &out[index[e.UID]]
		w.Events = append(w.Events, LedgerEvent{At: e.At, Kind: e.Kind, PreemptorProject: e.Preemptor})
	}
	return out, more, nil
}
