-- Who submitted a workload (issue 16): the subject of the caller who created it through
-- Arbiter's submission API, read by the scheduler from the top owner's arbiter.dev/submitted-by
-- annotation. Empty for workloads created otherwise. A researcher may change their own.
ALTER TABLE workloads ADD COLUMN submitter text NOT NULL DEFAULT '';
CREATE INDEX workloads_submitter ON workloads (submitter) WHERE submitter <> '';
