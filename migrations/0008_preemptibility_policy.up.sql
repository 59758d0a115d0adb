-- A project's policy may forbid changing its workloads' preemptibility, as allow_priority_change
-- does for priority (docs/scheduling.md S8, docs/api.md "Policy").
ALTER TABLE projects ADD COLUMN allow_preemptibility_change boolean NOT NULL DEFAULT true;
