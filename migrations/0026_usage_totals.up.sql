-- Pre-summed usage: what a pool's projects held together, and what each department's projects
-- held, per hour and per day, so that the Overview's and a department's charts read a row per
-- pool or department and period instead of every project's rows. The roll-up writes them in the
-- transaction that writes the projects' rows of the same period, from those rows, so that they
-- are always those rows' sums; retention prunes them with the projects' rows. They are few (a
-- row per department or pool, not per project) and sum many figures, so they keep double
-- precision: a sum of a hundred projects' rows is not rounded to a real again.
ALTER TABLE usage_pool_hours
    ADD COLUMN non_preemptible_gpu_seconds double precision NOT NULL DEFAULT 0,
    ADD COLUMN preemptible_gpu_seconds     double precision NOT NULL DEFAULT 0,
    ADD COLUMN borrowed_gpu_seconds        double precision NOT NULL DEFAULT 0;
ALTER TABLE usage_pool_days
    ADD COLUMN non_preemptible_gpu_seconds double precision NOT NULL DEFAULT 0,
    ADD COLUMN preemptible_gpu_seconds     double precision NOT NULL DEFAULT 0,
    ADD COLUMN borrowed_gpu_seconds        double precision NOT NULL DEFAULT 0;

-- A department's row sums the rows of the projects that were in it in that period (a project's
-- row names the department it was in at the period's end).
CREATE TABLE usage_department_hours (
    department_id               uuid NOT NULL,
    at                          timestamptz NOT NULL,
    node_pool                   text NOT NULL,
    non_preemptible_gpu_seconds double precision NOT NULL,
    preemptible_gpu_seconds     double precision NOT NULL,
    borrowed_gpu_seconds        double precision NOT NULL,
    pending_gpu_seconds         double precision NOT NULL,
    deserved_gpu_seconds        double precision NOT NULL,
    fair_share_gpu_seconds      double precision NOT NULL,
    preemptions                 integer NOT NULL,
    reclaims                    integer NOT NULL,
    PRIMARY KEY (department_id, at, node_pool)
);
CREATE INDEX usage_department_hours_at ON usage_department_hours (at);
CREATE TABLE usage_department_days (LIKE usage_department_hours INCLUDING ALL);

-- The history already rolled up gets its sums too.
UPDATE usage_pool_hours p SET non_preemptible_gpu_seconds = s.non_preemptible,
        preemptible_gpu_seconds = s.preemptible, borrowed_gpu_seconds = s.borrowed
    FROM (SELECT at, node_pool, sum(non_preemptible_gpu_seconds::float8) AS non_preemptible,
            sum(preemptible_gpu_seconds::float8) AS preemptible, sum(borrowed_gpu_seconds::float8) AS borrowed
        FROM usage_project_hours GROUP BY at, node_pool) s
    WHERE p.at = s.at AND p.node_pool = s.node_pool;
UPDATE usage_pool_days p SET non_preemptible_gpu_seconds = s.non_preemptible,
        preemptible_gpu_seconds = s.preemptible, borrowed_gpu_seconds = s.borrowed
    FROM (SELECT at, node_pool, sum(non_preemptible_gpu_seconds::float8) AS non_preemptible,
            sum(preemptible_gpu_seconds::float8) AS preemptible, sum(borrowed_gpu_seconds::float8) AS borrowed
        FROM usage_project_days GROUP BY at, node_pool) s
    WHERE p.at = s.at AND p.node_pool = s.node_pool;
INSERT INTO usage_department_hours
    SELECT department_id, at, node_pool, sum(non_preemptible_gpu_seconds::float8), sum(preemptible_gpu_seconds::float8),
        sum(borrowed_gpu_seconds::float8), sum(pending_gpu_seconds::float8), sum(deserved_gpu_seconds::float8),
        sum(fair_share_gpu_seconds::float8), sum(preemptions), sum(reclaims)
    FROM usage_project_hours GROUP BY department_id, at, node_pool;
INSERT INTO usage_department_days
    SELECT department_id, at, node_pool, sum(non_preemptible_gpu_seconds::float8), sum(preemptible_gpu_seconds::float8),
        sum(borrowed_gpu_seconds::float8), sum(pending_gpu_seconds::float8), sum(deserved_gpu_seconds::float8),
        sum(fair_share_gpu_seconds::float8), sum(preemptions), sum(reclaims)
    FROM usage_project_days GROUP BY department_id, at, node_pool;
