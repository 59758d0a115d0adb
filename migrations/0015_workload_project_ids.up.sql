-- A workload belongs to its project by id (workloads.project_id; no foreign key, as history
-- outlives projects): who may see and change it is decided on the id, so a renamed project keeps
-- its workloads and a project made later with an old name inherits none of them. Before this,
-- only submissions wrote the id and the scheduler's records cleared it. The rows written so are
-- given the id of the project that has their name now, if that project already existed when the
-- workload was queued (one made later with the name cannot be theirs); the rest stay without a
-- project id, which only those who may read the whole system see.
UPDATE workloads w SET project_id = p.id
FROM projects p
WHERE w.project_id IS NULL AND w.project_name <> '' AND p.name = w.project_name AND p.created_at <= w.queued_at;

-- The lists of a caller scoped to projects select by project id.
CREATE INDEX workloads_project ON workloads (project_id);
