DROP INDEX IF EXISTS workloads_active_queued_desc;
DROP INDEX IF EXISTS workloads_active_queued;
