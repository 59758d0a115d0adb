-- The ids given to older rows stay: the schema before this one has the column, and reads it
-- only where it is set.
DROP INDEX IF EXISTS workloads_project;
