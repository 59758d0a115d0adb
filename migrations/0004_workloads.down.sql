DROP TABLE IF EXISTS workload_events;
DROP TABLE IF EXISTS workloads;
