-- Arbiter's workload properties: the priority dictionary, categories and workload types
-- (scheduling.md §1-2), plus the audit log every change writes to (security.md).
-- Seeded rows carry stable ids: UUID v5 of "<kind>/<name>" in the namespace
-- UUIDv5(URL, "https://arbiter.dev/seed"), so the same row has the same id everywhere
-- (store.SeedID computes them; a test keeps the two in agreement).

CREATE TABLE workload_priorities (
    id         uuid PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    value      integer NOT NULL UNIQUE,
    source     text NOT NULL DEFAULT 'arbiter',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workload_categories (
    id                     uuid PRIMARY KEY,
    name                   text NOT NULL UNIQUE,
    description            text NOT NULL DEFAULT '',
    default_priority_id    uuid NOT NULL REFERENCES workload_priorities (id),
    default_preemptibility text NOT NULL CHECK (default_preemptibility IN ('preemptible', 'non-preemptible')),
    created_at             timestamptz NOT NULL DEFAULT now(),
    created_by             text NOT NULL DEFAULT 'system',
    updated_at             timestamptz NOT NULL DEFAULT now(),
    updated_by             text NOT NULL DEFAULT 'system'
);

-- A null priority_id or preemptibility means "the category's default"; a null category_id
-- means the cluster default (low, preemptible) until an admin assigns a category.
CREATE TABLE workload_types (
    id             uuid PRIMARY KEY,
    name           text NOT NULL,
    "group"        text NOT NULL DEFAULT '',
    category_id    uuid REFERENCES workload_categories (id),
    priority_id    uuid REFERENCES workload_priorities (id),
    preemptibility text CHECK (preemptibility IN ('preemptible', 'non-preemptible')),
    external       boolean NOT NULL,
    gang_policy    text NOT NULL DEFAULT 'single'
                   CHECK (gang_policy IN ('single', 'job-parallelism', 'replica-specs', 'ray', 'leader-worker-set', 'all-replicas')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    created_by     text NOT NULL DEFAULT 'system',
    updated_at     timestamptz NOT NULL DEFAULT now(),
    updated_by     text NOT NULL DEFAULT 'system',
    UNIQUE (name, "group")
);

-- Append-only for the application: no UPDATE or DELETE is ever issued against it.
CREATE TABLE audit_log (
    id           bigserial PRIMARY KEY,
    at           timestamptz NOT NULL DEFAULT now(),
    subject      text NOT NULL,
    subject_type text NOT NULL,
    source_ip    text NOT NULL DEFAULT '',
    action       text NOT NULL,
    http_method  text NOT NULL DEFAULT '',
    entity_type  text NOT NULL,
    entity_id    text NOT NULL DEFAULT '',
    entity_name  text NOT NULL DEFAULT '',
    result       text NOT NULL,
    http_status  integer NOT NULL DEFAULT 0,
    request_id   text NOT NULL DEFAULT '',
    changes      jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_log_at ON audit_log (at DESC);

INSERT INTO workload_priorities (id, name, value, source) VALUES
  ('da562ae2-a6a7-5fa7-a367-e187ab1cfbc3', 'very-low', 25, 'arbiter'),
  ('6723b9d7-73d1-5e4c-a494-d8fdeddc541c', 'low', 40, 'arbiter'),
  ('45a4858d-604f-5add-bbd4-b82a75bd0c2b', 'medium-low', 65, 'arbiter'),
  ('8b9a07f1-b0a7-54f4-90ba-cc15d235eaf6', 'medium', 80, 'arbiter'),
  ('554fed0a-02d4-5bf8-9c14-39d5384a4ea2', 'medium-high', 90, 'arbiter'),
  ('356f5aec-18bb-5d15-9935-65e7ec3f798c', 'high', 125, 'arbiter'),
  ('fa04d4d9-8dc4-50bc-b959-beabc5487556', 'very-high', 150, 'arbiter');

INSERT INTO workload_categories (id, name, description, default_priority_id, default_preemptibility, created_by, updated_by) VALUES
  ('5598136f-0c21-566a-a1bb-c3329c036650', 'Build', 'Interactive work: workspaces, notebooks, builds. Runs inside deserved quota and is not interrupted.', '356f5aec-18bb-5d15-9935-65e7ec3f798c', 'non-preemptible', 'system', 'system'),
  ('792f5036-37db-50d2-8901-333955e3e6dd', 'Train', 'Batch training. May borrow idle GPUs beyond deserved quota and may be interrupted.', '6723b9d7-73d1-5e4c-a494-d8fdeddc541c', 'preemptible', 'system', 'system'),
  ('e7d088d8-18ce-5221-86a1-c4802c595743', 'Deploy', 'Inference and long-running services. Runs inside deserved quota and is not interrupted.', 'fa04d4d9-8dc4-50bc-b959-beabc5487556', 'non-preemptible', 'system', 'system');

INSERT INTO workload_types (id, name, "group", category_id, external, gang_policy, created_by, updated_by) VALUES
  ('e3bde289-67b6-5900-bcc8-0f58296e4d8e', 'Workspace', 'arbiter.dev', '5598136f-0c21-566a-a1bb-c3329c036650', false, 'single', 'system', 'system'),
  ('b41907c7-806e-5f1f-ae04-c3c42516f9d4', 'Standard training', 'arbiter.dev', '792f5036-37db-50d2-8901-333955e3e6dd', false, 'single', 'system', 'system'),
  ('343a3ae7-d817-5ab9-8afe-9a45e669ad6b', 'Distributed training', 'arbiter.dev', '792f5036-37db-50d2-8901-333955e3e6dd', false, 'all-replicas', 'system', 'system'),
  ('eb840879-621a-5e73-8bd4-a47638eea37c', 'Custom inference', 'arbiter.dev', 'e7d088d8-18ce-5221-86a1-c4802c595743', false, 'single', 'system', 'system'),
  ('139bbd0b-7e11-5032-a1dd-d8f2529f65e3', 'NVIDIA NIM inference', 'arbiter.dev', 'e7d088d8-18ce-5221-86a1-c4802c595743', false, 'single', 'system', 'system'),
  ('c1a53481-b6ac-51b0-ac55-6bc284b8dbf2', 'Hugging Face inference', 'arbiter.dev', 'e7d088d8-18ce-5221-86a1-c4802c595743', false, 'single', 'system', 'system'),
  ('584da3b3-9d04-5473-984d-ec1218ad1c37', 'Distributed inference', 'arbiter.dev', 'e7d088d8-18ce-5221-86a1-c4802c595743', false, 'all-replicas', 'system', 'system'),
  ('4e9d83b0-7476-5cf1-b5f2-ce60cbf5c662', 'AMLJob', 'amlarc.azureml.com', '792f5036-37db-50d2-8901-333955e3e6dd', true, 'single', 'system', 'system'),
  ('14dd7bc2-20bf-53d2-a217-5eddeb2a1cd2', 'CronJob', 'batch', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'job-parallelism', 'system', 'system'),
  ('6af49d94-ef36-5e52-b7d7-7f3a77f85e2b', 'Deployment', 'apps', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('437064ca-bfc3-5a48-a4f6-c5878ef214a9', 'DevWorkspace', 'workspace.devfile.io', '5598136f-0c21-566a-a1bb-c3329c036650', true, 'single', 'system', 'system'),
  ('4e745e63-aa7d-5b79-8ec8-cb6cf510c183', 'DynamoGraphDeployment', 'nvidia.com', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('41a150bd-7a41-5015-b34e-02620f184638', 'InferenceService', 'serving.kserve.io', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('8033ec86-9148-59b6-9705-87107afbbc4e', 'JAXJob', 'kubeflow.org', '792f5036-37db-50d2-8901-333955e3e6dd', true, 'replica-specs', 'system', 'system'),
  ('19fbd4e8-68ab-5c2c-8d95-d57e189f318d', 'Job', 'batch', '5598136f-0c21-566a-a1bb-c3329c036650', true, 'job-parallelism', 'system', 'system'),
  ('0d1ea436-acce-597b-ab54-16afff401e2c', 'LeaderWorkerSet', 'leaderworkerset.x-k8s.io', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'leader-worker-set', 'system', 'system'),
  ('baab28fc-5552-5714-b598-da9858ddf6db', 'MPIJob', 'kubeflow.org', '792f5036-37db-50d2-8901-333955e3e6dd', true, 'replica-specs', 'system', 'system'),
  ('8d26e13e-87d3-5f21-855d-ff26a0fc2154', 'NIMCache', 'apps.nvidia.com', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('90f5b7d4-6ea1-50d2-ac11-ac2ef2ea6107', 'NIMService', 'apps.nvidia.com', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('4aa75b83-055f-5dca-92f7-5e5db4d4056a', 'Notebook', 'kubeflow.org', '5598136f-0c21-566a-a1bb-c3329c036650', true, 'single', 'system', 'system'),
  ('ef0f8680-cca3-5c6b-8c6b-63e3af5ae0f2', 'PipelineRun', 'tekton.dev', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('647c4d8a-be02-589a-9835-701ea371a4d6', 'Pod', '', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('bf63c129-7823-5323-9f75-a9cf020be4cb', 'PyTorchJob', 'kubeflow.org', '792f5036-37db-50d2-8901-333955e3e6dd', true, 'replica-specs', 'system', 'system'),
  ('c04c3d36-907a-5859-ac48-28f1929e5644', 'RayCluster', 'ray.io', '792f5036-37db-50d2-8901-333955e3e6dd', true, 'ray', 'system', 'system'),
  ('15333869-a105-5776-9ff1-ab206a0f729b', 'RayJob', 'ray.io', '792f5036-37db-50d2-8901-333955e3e6dd', true, 'ray', 'system', 'system'),
  ('cb8ceff4-79e0-570c-b547-e4301851171d', 'RayService', 'ray.io', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('89f0059a-3f36-5f50-bacd-373bdd2838cf', 'ReplicaSet', 'apps', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('225ffa89-39ee-5c12-ad2f-05f13b0e55d2', 'ScheduledWorkflow', 'kubeflow.org', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('b8507ef1-ec1a-5afc-88b7-6bcf60ef6f3b', 'SeldonDeployment', 'machinelearning.seldon.io', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('b37a0521-0b04-5527-bbcd-f1c5715ce300', 'Service', 'serving.knative.dev', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('605e241a-9e6d-514b-b7c7-001bbc1ea17f', 'SPOTRequest', 'run.ai', NULL, true, 'single', 'system', 'system'),
  ('e2f61d6e-e3f4-57a6-a08a-2a2266dfd1f2', 'StatefulSet', 'apps', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('e711d120-04c4-5443-9bc3-196b07aed838', 'TaskRun', 'tekton.dev', '5598136f-0c21-566a-a1bb-c3329c036650', true, 'single', 'system', 'system'),
  ('2c6715de-970d-512a-8d44-b38777d5a7b0', 'TFJob', 'kubeflow.org', '792f5036-37db-50d2-8901-333955e3e6dd', true, 'replica-specs', 'system', 'system'),
  ('58e84e92-85ea-5fd8-94c2-289e570d7a3e', 'VirtualMachineInstance', 'kubevirt.io', '792f5036-37db-50d2-8901-333955e3e6dd', true, 'single', 'system', 'system'),
  ('e22a12d4-0525-5a46-b5b0-dbac953de3c1', 'Workflow', 'argoproj.io', 'e7d088d8-18ce-5221-86a1-c4802c595743', true, 'single', 'system', 'system'),
  ('3b4ea991-9f85-5085-97f7-656d7d235a43', 'XGBoostJob', 'kubeflow.org', '792f5036-37db-50d2-8901-333955e3e6dd', true, 'replica-specs', 'system', 'system');
