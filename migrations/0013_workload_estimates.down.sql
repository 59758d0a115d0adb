ALTER TABLE workloads DROP COLUMN IF EXISTS estimate_basis, DROP COLUMN IF EXISTS estimated_start_at;
