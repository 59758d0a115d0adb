-- Semi-preemptible goes back to non-preemptible, which its minimum was.
UPDATE workload_categories SET default_preemptibility = 'non-preemptible' WHERE default_preemptibility = 'semi-preemptible';
UPDATE workload_types SET preemptibility = 'non-preemptible' WHERE preemptibility = 'semi-preemptible';
ALTER TABLE workload_categories
    DROP CONSTRAINT workload_categories_default_preemptibility_check,
    ADD CONSTRAINT workload_categories_default_preemptibility_check
        CHECK (default_preemptibility IN ('preemptible', 'non-preemptible'));
ALTER TABLE workload_types
    DROP CONSTRAINT workload_types_preemptibility_check,
    ADD CONSTRAINT workload_types_preemptibility_check
        CHECK (preemptibility IN ('preemptible', 'non-preemptible'));
ALTER TABLE projects
    DROP COLUMN IF EXISTS preemption_delay_seconds,
    DROP COLUMN IF EXISTS reclaim_min_runtime_seconds,
    DROP COLUMN IF EXISTS priority_offset,
    DROP COLUMN IF EXISTS priority_policy;
ALTER TABLE departments
    DROP COLUMN IF EXISTS priority_offset,
    DROP COLUMN IF EXISTS priority_policy;
