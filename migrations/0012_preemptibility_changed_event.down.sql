-- Back to the kinds of 0004: a change of preemptibility is recorded as PriorityChanged again, as
-- it was then.
ALTER TABLE workload_events DROP CONSTRAINT IF EXISTS workload_events_kind_check;
UPDATE workload_events SET kind = 'PriorityChanged' WHERE kind = 'PreemptibilityChanged';
ALTER TABLE workload_events ADD CONSTRAINT workload_events_kind_check CHECK (kind IN ('Queued', 'Admitted', 'Preempted',
    'Reclaimed', 'Suspended', 'Resumed', 'PriorityChanged', 'Completed', 'Failed'));
