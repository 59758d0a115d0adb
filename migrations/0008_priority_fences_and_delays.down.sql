ALTER TABLE projects
    DROP COLUMN IF EXISTS preemption_delay_seconds,
    DROP COLUMN IF EXISTS reclaim_min_runtime_seconds,
    DROP COLUMN IF EXISTS priority_offset,
    DROP COLUMN IF EXISTS priority_policy;
ALTER TABLE departments
    DROP COLUMN IF EXISTS priority_offset,
    DROP COLUMN IF EXISTS priority_policy;
