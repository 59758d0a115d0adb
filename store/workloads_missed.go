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
			b.Queue(insertWorkloadSQL+` ON CONFLICT (uid) DO NOTHING`, recordArgs(&r)...)
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
