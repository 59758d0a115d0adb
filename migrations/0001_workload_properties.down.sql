DROP TABLE IF EXISTS audit_log;
DROP TABLE IF EXISTS workload_types;
DROP TABLE IF EXISTS workload_categories;
DROP TABLE IF EXISTS workload_priorities;
