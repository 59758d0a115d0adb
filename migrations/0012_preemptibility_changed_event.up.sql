-- A change of a workload's preemptibility is its own kind of event (docs/api.md "Workloads"):
-- recorded as PriorityChanged before, it read as a change of priority.
ALTER TABLE workload_events DROP CONSTRAINT IF EXISTS workload_events_kind_check;
ALTER TABLE workload_events ADD CONSTRAINT workload_events_kind_check CHECK (kind IN ('Queued', 'Admitted', 'Preempted',
    'Reclaimed', 'Suspended', 'Resumed', 'PriorityChanged', 'PreemptibilityChanged', 'Completed', 'Failed'));
