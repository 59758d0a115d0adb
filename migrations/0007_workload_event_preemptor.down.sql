ALTER TABLE workload_events DROP COLUMN IF EXISTS borrowed_gpus, DROP COLUMN IF EXISTS preemptor_uid;
