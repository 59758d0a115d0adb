package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/arbiterhq/arbiter/store"
)

// The leader keeps the audit log's partitions (store.KeepAuditPartitions): when its term
// starts and every auditUpkeepEvery after, it makes the coming months' partitions and drops
// the months past the retention. A failed upkeep is tried again after auditUpkeepRetry; one
// upkeep may take at most auditUpkeepTimeout (each statement is bounded by the database
// timeout besides). A replica that does not lead never changes the partitions.
const (
	auditUpkeepEvery   = time.Hour
	auditUpkeepRetry   = time.Minute
	auditUpkeepTimeout = time.Minute
)

// keepAuditLog runs the audit log's upkeep until ctx ends.
func keepAuditLog(ctx context.Context, st *store.Store, retention time.Duration, log *slog.Logger) {
	for {
		next := auditUpkeepEvery
		upkeep, cancel := context.WithTimeout(ctx, auditUpkeepTimeout)
		err := st.KeepAuditPartitions(upkeep, time.Now(), retention)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Warn("audit log partitions not kept; trying again shortly", "retry_in", auditUpkeepRetry, "err", err)
			next = auditUpkeepRetry
		}
		timer := time.NewTimer(next)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}
