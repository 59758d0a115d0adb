-- The start estimate of a waiting workload is kept with its record (docs/scheduling.md
-- "Estimated start"): the leader makes it, and every replica answers it. NULL when it cannot be
-- told; the basis says what it rests on, or why there is none; '' when there is none yet.
ALTER TABLE workloads
    ADD COLUMN estimated_start_at timestamptz,
    ADD COLUMN estimate_basis text NOT NULL DEFAULT '';
