-- The scheduler's record of every workload it has seen (kept after the workload is gone) and
-- each workload's history (architecture.md "Data model"). Names are kept beside ids so the
-- history stays readable after a project or type is deleted or renamed.
CREATE TABLE workloads (
    uid             text PRIMARY KEY,           -- the top owner's UID
    namespace       text NOT NULL,
    name            text NOT NULL,
    kind            text NOT NULL,
    api_group       text NOT NULL DEFAULT '',
    type_name       text NOT NULL DEFAULT '',
    category_name   text NOT NULL DEFAULT '',
    project_id      uuid,                       -- no foreign key: history outlives projects
    project_name    text NOT NULL DEFAULT '',
    department_name text NOT NULL DEFAULT '',
    priority_name   text NOT NULL DEFAULT '',
    priority_value  integer NOT NULL DEFAULT 0,
    preemptibility  text NOT NULL DEFAULT '',
    phase           text NOT NULL CHECK (phase IN ('Pending', 'Running', 'Suspended', 'Preempted', 'Completed', 'Failed')),
    reason          text NOT NULL DEFAULT '',
    message         text NOT NULL DEFAULT '',
    queue_position  integer NOT NULL DEFAULT 0,
    gang            integer NOT NULL DEFAULT 1,
    requested_gpus  integer NOT NULL DEFAULT 0,
    allocated_gpus  integer NOT NULL DEFAULT 0,
    node_pool       text NOT NULL DEFAULT '',
    nodes           text[] NOT NULL DEFAULT '{}',
    preemptions     integer NOT NULL DEFAULT 0,
    queued_at       timestamptz NOT NULL,
    started_at      timestamptz,
    finished_at     timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workloads_active ON workloads (project_name, queue_position) WHERE finished_at IS NULL;
CREATE INDEX workloads_queued ON workloads (queued_at DESC, uid);
CREATE INDEX workloads_name ON workloads (name, uid);

CREATE TABLE workload_events (
    id           bigserial PRIMARY KEY,
    workload_uid text NOT NULL,
    at           timestamptz NOT NULL DEFAULT now(),
    kind         text NOT NULL CHECK (kind IN ('Queued', 'Admitted', 'Preempted', 'Reclaimed', 'Suspended', 'Resumed',
                                               'PriorityChanged', 'Completed', 'Failed')),
    reason       text NOT NULL DEFAULT '',
    message      text NOT NULL DEFAULT '',
    actor        text NOT NULL DEFAULT 'scheduler'
);
CREATE INDEX workload_events_workload ON workload_events (workload_uid, id);
CREATE INDEX workload_events_at ON workload_events (at DESC) WHERE kind IN ('Preempted', 'Reclaimed');
