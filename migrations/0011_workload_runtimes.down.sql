DROP INDEX IF EXISTS workloads_completed;
