ALTER TABLE projects DROP COLUMN allow_preemptibility_change;
