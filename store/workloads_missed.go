package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// MissedWorkload is a finished workload the cluster shows and the records may lack: what a
// leader that stopped before writing its records ran (server/takeover.go). Record is written
// finished (its Phase Completed or Failed, FinishedAt set); Events is its history.
type MissedWorkload struct {
	Record WorkloadRecord
	Events []WorkloadEvent
}

// RecordMissedWorkloads writes the records of the workloads that have none, with their
// history, and returns how many it wrote. A workload already recorded keeps its record and
// history untouched, however old or unfinished: the record's uid is its key, so running this
// twice, or beside the scheduler's own writes, never writes a workload or its events twice.
// The caller bounds the slice (a page at a time); it is written in one transaction.
func (s *Store) RecordMissedWorkloads(ctx context.Context, missed []MissedWorkload) (int, error) {
	if len(missed) == 0 {
		return 0, nil
	}
	written := 0
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		written = 0
		b := &pgx.Batch{}
		for i := range missed {
			r := missed[i].Record.bounded()
			if r.Nodes == nil {
				r.Nodes = []string{}
			}
			b.Queue(`
				INSERT INTO workloads (uid, namespace, name, kind, api_group, type_name, category_name, project_id,
				    project_name, department_name, priority_name, priority_value, preemptibility, phase, reason,
				    message, queue_position, gang, requested_gpus, allocated_gpus, node_pool, nodes, queued_at,
				    started_at, finished_at, submitter)
				VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26)
				ON CONFLICT (uid) DO NOTHING`,
				r.UID, r.Namespace, r.Name, r.Kind, r.APIGroup, r.TypeName, r.CategoryName, r.ProjectID,
				r.ProjectName, r.DepartmentName, r.PriorityName, r.PriorityValue, r.Preemptibility, r.Phase, r.Reason,
				r.Message, r.QueuePosition, r.Gang, r.RequestedGPUs, r.AllocatedGPUs, r.NodePool, r.Nodes, r.QueuedAt,
				r.StartedAt, r.FinishedAt, r.Submitter)
		}
		br := tx.SendBatch(ctx, b)
		inserted := make([]bool, len(missed))
		for i := range missed {
			tag, err := br.Exec()
			if err != nil {
				_ = br.Close()
				return err
			}
			inserted[i] = tag.RowsAffected() == 1
		}
		if err := br.Close(); err != nil {
			return err
		}
		events := &pgx.Batch{}
		for i, m := range missed {
			if !inserted[i] {
				continue
			}
			written++
			for _, e := range m.Events {
				queueEvent(events, e.bounded())
			}
		}
		if events.Len() == 0 {
			return nil
		}
		return tx.SendBatch(ctx, events).Close()
	})
	if err != nil {
		return 0, err
	}
	return written, nil
}
