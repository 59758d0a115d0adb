-- Priority fencing and offsets (S25) on departments and projects; a project's preemption delay
-- and reclaim minimum runtime (S27). Every existing unit stays fenced without offset or delay,
-- which is how it was scheduled before.
ALTER TABLE departments
    ADD COLUMN priority_policy text NOT NULL DEFAULT 'fence' CHECK (priority_policy IN ('fence', 'open')),
    ADD COLUMN priority_offset integer NOT NULL DEFAULT 0;
ALTER TABLE projects
    ADD COLUMN priority_policy text NOT NULL DEFAULT 'fence' CHECK (priority_policy IN ('fence', 'open')),
    ADD COLUMN priority_offset integer NOT NULL DEFAULT 0,
    ADD COLUMN reclaim_min_runtime_seconds integer NOT NULL DEFAULT 0 CHECK (reclaim_min_runtime_seconds >= 0),
    ADD COLUMN preemption_delay_seconds integer NOT NULL DEFAULT 0 CHECK (preemption_delay_seconds >= 0);

-- Semi-preemptible (S26): a third preemptibility for categories and workload types.
ALTER TABLE workload_categories
    DROP CONSTRAINT workload_categories_default_preemptibility_check,
    ADD CONSTRAINT workload_categories_default_preemptibility_check
        CHECK (default_preemptibility IN ('preemptible', 'non-preemptible', 'semi-preemptible'));
ALTER TABLE workload_types
    DROP CONSTRAINT workload_types_preemptibility_check,
    ADD CONSTRAINT workload_types_preemptibility_check
        CHECK (preemptibility IN ('preemptible', 'non-preemptible', 'semi-preemptible'));
