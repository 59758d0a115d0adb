package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// WorkloadEstimate is a waiting workload's start estimate as the leader made it
// (docs/scheduling.md "Estimated start"), kept with its record so that every replica answers
// the same. At is nil when the start cannot be told; Basis says what the estimate rests on, or
// why there is none. A Basis of "" takes the estimate away (the workload no longer waits).
type WorkloadEstimate struct {
	UID   string
	At    *time.Time
	Basis string
}

// OwnerStoppedBasis is the estimate of a workload its owner stopped (a Job suspended by a
// person, not by Arbiter): it waits for no capacity, so nothing can be estimated until it is
// run again. StopWorkloads and RecordWorkloadAction write it; a record of the workload back in
// the cluster's active set (RecordWorkloads) takes it away, and estimates never overwrite it.
const OwnerStoppedBasis = "No estimate: its owner stopped it; it starts only once it is run again."

// estimatesPerStatement bounds one UPDATE of RecordEstimates, so that each statement stays well
// within the store's deadline even when a new leader writes every waiting workload's estimate.
const estimatesPerStatement = 5000

// RecordEstimates writes start estimates that changed, in one transaction of one statement
// per estimatesPerStatement, each under the store's deadline. Finished records and those of
// workloads their owner stopped are left as they are.
func (s *Store) RecordEstimates(ctx context.Context, estimates []WorkloadEstimate) error {
	if len(estimates) == 0 {
		return nil
	}
	return s.InTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for from := 0; from < len(estimates); from += estimatesPerStatement {
			part := estimates[from:min(from+estimatesPerStatement, len(estimates))]
			uids, ats, bases := make([]string, len(part)), make([]*time.Time, len(part)), make([]string, len(part))
			for i, e := range part {
				uids[i], ats[i], bases[i] = e.UID, e.At, e.Basis
			}
			b.Queue(`UPDATE workloads w SET estimated_start_at = e.at, estimate_basis = e.basis
			         FROM unnest($1::text[], $2::timestamptz[], $3::text[]) AS e(uid, at, basis)
			         WHERE w.uid = e.uid AND w.finished_at IS NULL AND w.estimate_basis <> $4`,
				uids, ats, bases, OwnerStoppedBasis)
		}
		return tx.SendBatch(ctx, b).Close()
	})
}
