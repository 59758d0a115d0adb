ALTER TABLE workloads DROP COLUMN IF EXISTS preemptibility_from, DROP COLUMN IF EXISTS priority_from;
