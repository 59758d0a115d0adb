-- A Preempted or Reclaimed event names its preemptor by UID (so the console can link to it) and,
-- when known, how many GPUs the victim's project was using beyond its deserved quota just before
-- the eviction (the borrowed GPUs a reclaim takes back).
ALTER TABLE workload_events
    ADD COLUMN preemptor_uid text NOT NULL DEFAULT '',
    ADD COLUMN borrowed_gpus integer;
