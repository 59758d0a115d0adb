-- Where a workload's priority and preemptibility came from (docs/scheduling.md S7, S8), as the
-- leader last resolved them: a sentence a person reads ("asked for with the label
-- priorityClassName on the Job", "project vision's default"); '' until the scheduler has
-- resolved the workload. Bounded as store.MaxFromBytes bounds what is written.
ALTER TABLE workloads
    ADD COLUMN priority_from text NOT NULL DEFAULT ''
        CONSTRAINT workloads_priority_from_length CHECK (octet_length(priority_from) <= 512),
    ADD COLUMN preemptibility_from text NOT NULL DEFAULT ''
        CONSTRAINT workloads_preemptibility_from_length CHECK (octet_length(preemptibility_from) <= 512);
