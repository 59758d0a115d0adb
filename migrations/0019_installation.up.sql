-- The installation: what an Arbiter installation has exactly one of. Run:ai's API names the
-- cluster on node pools, organization units and workloads, and its scripts send that id back;
-- the id lives with the data so that every replica answers the same one and a restored backup
-- keeps it. `arbiter serve --cluster-id` changes it (a team moving from Run:ai keeps its
-- cluster's id, and with it its scripts). The seed is store.DefaultClusterID.
CREATE TABLE installation (
    one        boolean PRIMARY KEY DEFAULT true CHECK (one),
    cluster_id uuid NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO installation (cluster_id) VALUES ('94b6171f-7140-5fdd-831e-35e9df1d9f38');
