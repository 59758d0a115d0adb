DROP INDEX IF EXISTS workloads_submitter;
ALTER TABLE workloads DROP COLUMN submitter;
