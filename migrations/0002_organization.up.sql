-- The organization of architecture.md's data model and api.md "Organization and quotas":
-- node pools, departments, projects (with the namespaces they own and their scheduling
-- policy, scheduling.md §5-9) and per-node-pool GPU quotas (scheduling.md §7).

-- A node pool selects the nodes labelled label_key=label_value. The seeded `default` pool has
-- an empty selector: it holds every node no other pool selects. Its id is
-- store.SeedID("node-pool", "default").
CREATE TABLE node_pools (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name        text NOT NULL UNIQUE,
    label_key   text NOT NULL DEFAULT '',
    label_value text NOT NULL DEFAULT '',
    placement   text NOT NULL DEFAULT 'binpack' CHECK (placement IN ('binpack', 'spread')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    created_by  text NOT NULL DEFAULT 'system',
    updated_at  timestamptz NOT NULL DEFAULT now(),
    updated_by  text NOT NULL DEFAULT 'system',
    -- Two pools never select the same nodes (and only one pool has the empty selector).
    UNIQUE (label_key, label_value)
);

INSERT INTO node_pools (id, name, label_key, label_value, placement) VALUES
  ('5c0ca8b4-1782-5185-8ed0-abea1f348857', 'default', '', '', 'binpack');

CREATE TABLE departments (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text NOT NULL DEFAULT 'system',
    updated_at timestamptz NOT NULL DEFAULT now(),
    updated_by text NOT NULL DEFAULT 'system'
);

-- limit_gpus -1 means no limit. A node pool that quotas refer to cannot be deleted (RESTRICT).
CREATE TABLE department_quotas (
    department_id     uuid NOT NULL REFERENCES departments (id) ON DELETE CASCADE,
    node_pool_id      uuid NOT NULL REFERENCES node_pools (id) ON DELETE RESTRICT,
    deserved_gpus     integer NOT NULL CHECK (deserved_gpus >= 0),
    limit_gpus        integer NOT NULL DEFAULT -1 CHECK (limit_gpus = -1 OR limit_gpus >= deserved_gpus),
    over_quota_weight integer NOT NULL DEFAULT 2 CHECK (over_quota_weight >= 0),
    PRIMARY KEY (department_id, node_pool_id)
);

-- The policy columns are api.md's Policy; null priorities mean "no default" / "no bound".
-- node_pool_ids is the ordered list of pools the project's workloads try (S21); empty means
-- the default order (the pools it has quota in, then `default`).
CREATE TABLE projects (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                  text NOT NULL UNIQUE,
    department_id         uuid NOT NULL REFERENCES departments (id) ON DELETE RESTRICT,
    node_pool_ids         uuid[] NOT NULL DEFAULT '{}',
    default_priority_id   uuid REFERENCES workload_priorities (id),
    allow_priority_change boolean NOT NULL DEFAULT true,
    min_priority_id       uuid REFERENCES workload_priorities (id),
    max_priority_id       uuid REFERENCES workload_priorities (id),
    preemption_order      text NOT NULL DEFAULT 'oldest' CHECK (preemption_order IN ('oldest', 'newest')),
    preemption_mode       text NOT NULL DEFAULT 'terminate' CHECK (preemption_mode IN ('terminate', 'suspend')),
    min_runtime_seconds   integer NOT NULL DEFAULT 0 CHECK (min_runtime_seconds >= 0),
    queueing              text NOT NULL DEFAULT 'best-effort' CHECK (queueing IN ('best-effort', 'strict')),
    created_at            timestamptz NOT NULL DEFAULT now(),
    created_by            text NOT NULL DEFAULT 'system',
    updated_at            timestamptz NOT NULL DEFAULT now(),
    updated_by            text NOT NULL DEFAULT 'system'
);
CREATE INDEX projects_department ON projects (department_id);

-- A namespace belongs to at most one project: one row per namespace, so the primary key
-- enforces it (an array column could not).
CREATE TABLE project_namespaces (
    namespace  text PRIMARY KEY,
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE
);
CREATE INDEX project_namespaces_project ON project_namespaces (project_id);

CREATE TABLE project_quotas (
    project_id        uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    node_pool_id      uuid NOT NULL REFERENCES node_pools (id) ON DELETE RESTRICT,
    deserved_gpus     integer NOT NULL CHECK (deserved_gpus >= 0),
    limit_gpus        integer NOT NULL DEFAULT -1 CHECK (limit_gpus = -1 OR limit_gpus >= deserved_gpus),
    over_quota_weight integer NOT NULL DEFAULT 2 CHECK (over_quota_weight >= 0),
    PRIMARY KEY (project_id, node_pool_id)
);
