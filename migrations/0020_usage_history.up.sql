-- Usage history: what every node pool held, per project, over time. The leader writes one raw
-- sample per node pool and recording interval; a roll-up sums closed hours and closed days;
-- retention prunes each level (docs/operations.md gives the defaults and the sizes).
--
-- Raw samples are one row per (node pool, sample time) holding parallel arrays over the
-- projects with any non-zero figure in that pool, instead of one row per project: 1,000
-- projects x 10 pools every 30 s is 28,800 rows a day, not 29 million. The arrays' i-th entries
-- belong to the roster's i-th project. A roster (who is in the pool, in which department, and
-- what it deserves) changes rarely, so samples share it by its digest instead of repeating
-- 32 bytes of ids per project in every row.
CREATE TABLE usage_rosters (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    digest         bytea NOT NULL UNIQUE,
    project_ids    uuid[] NOT NULL,
    department_ids uuid[] NOT NULL,
    deserved       real[] NOT NULL,
    CHECK (cardinality(department_ids) = cardinality(project_ids)
       AND cardinality(deserved) = cardinality(project_ids))
);

-- The key is the sample time truncated to the interval: a second write of the same interval
-- (a restart, a failover, two leaders for a moment) conflicts and is dropped.
CREATE TABLE usage_samples (
    at               timestamptz NOT NULL,
    node_pool        text NOT NULL,
    interval_seconds integer NOT NULL CHECK (interval_seconds > 0),
    capacity_gpus    real NOT NULL,
    roster_id        bigint NOT NULL REFERENCES usage_rosters (id),
    -- GPUs, one entry per roster project.
    non_preemptible  real[] NOT NULL,
    preemptible      real[] NOT NULL,
    borrowed         real[] NOT NULL,
    pending          real[] NOT NULL,
    fair_share       real[] NOT NULL,
    -- Workloads preempted (S16) and reclaimed (S17) since the previous sample.
    preemptions      integer[] NOT NULL,
    reclaims         integer[] NOT NULL,
    PRIMARY KEY (at, node_pool)
);
CREATE INDEX usage_samples_roster_id ON usage_samples (roster_id);

-- Roll-ups hold sums, not averages: GPU-seconds (a figure times the seconds it was recorded)
-- and counts, so that hours add up to days and any span of rows to a bucket. A project's
-- average over a span is its GPU-seconds divided by its pool's recorded seconds over that span
-- (a project absent from a sample held nothing then).
CREATE TABLE usage_pool_hours (
    at                   timestamptz NOT NULL,
    node_pool            text NOT NULL,
    recorded_seconds     real NOT NULL,
    capacity_gpu_seconds real NOT NULL,
    PRIMARY KEY (at, node_pool)
);
CREATE TABLE usage_project_hours (
    at                          timestamptz NOT NULL,
    node_pool                   text NOT NULL,
    project_id                  uuid NOT NULL,
    department_id               uuid NOT NULL,
    non_preemptible_gpu_seconds real NOT NULL,
    preemptible_gpu_seconds     real NOT NULL,
    borrowed_gpu_seconds        real NOT NULL,
    pending_gpu_seconds         real NOT NULL,
    deserved_gpu_seconds        real NOT NULL,
    fair_share_gpu_seconds      real NOT NULL,
    preemptions                 integer NOT NULL,
    reclaims                    integer NOT NULL,
    -- The key carries every figure, so that once vacuumed (autovacuum does it for tables that
    -- are mostly inserted into) a project's rows are read from the index alone, where they lie
    -- together; in the table they lie by time, one period of every project after another, and
    -- 30 days of one project's rows would be a page each.
    PRIMARY KEY (project_id, at, node_pool) INCLUDE (department_id, non_preemptible_gpu_seconds,
        preemptible_gpu_seconds, borrowed_gpu_seconds, pending_gpu_seconds, deserved_gpu_seconds,
        fair_share_gpu_seconds, preemptions, reclaims)
);
CREATE INDEX usage_project_hours_at ON usage_project_hours (at);

CREATE TABLE usage_pool_days (LIKE usage_pool_hours INCLUDING ALL);
CREATE TABLE usage_project_days (LIKE usage_project_hours INCLUDING ALL);

-- How far each roll-up has gone: every hour (day) before rolled_up_to is summed. Readers use
-- the roll-up before it and finer rows after it; pruning never removes finer rows that are
-- not yet rolled up.
CREATE TABLE usage_rollups (
    level        text PRIMARY KEY CHECK (level IN ('hour', 'day')),
    rolled_up_to timestamptz NOT NULL
);
