-- The start estimate (docs/scheduling.md "Estimated start") takes the median runtime of the
-- workloads of each type in each project that completed lately: this keeps that query to the
-- completed rows of the window, however much history accumulates.
CREATE INDEX workloads_completed ON workloads (finished_at) WHERE phase = 'Completed';
