-- Indexes for GET /api/v1/workloads (api.md "Workloads"). Lists order by the sort column with
-- NULLS LAST in both directions, then by uid; without deleted=true they show only unfinished
-- workloads. Partial indexes over unfinished rows keep the first page quick however much history
-- accumulates, in queue order (the default) and newest first.
CREATE INDEX workloads_active_queued ON workloads (queued_at, uid) WHERE finished_at IS NULL;
CREATE INDEX workloads_active_queued_desc ON workloads (queued_at DESC NULLS LAST, uid DESC) WHERE finished_at IS NULL;
