-- Network topologies (Run:ai's network-topologies API; docs/scheduling.md S29): an ordered list
-- of node label keys, widest first (block, rack, kubernetes.io/hostname), that node pools
-- refer to. Topologies read from the cluster (Kueue's and KAI's Topology objects) are not
-- stored: the scheduler watches them.
CREATE TABLE network_topologies (
    id         uuid PRIMARY KEY,
    -- Run:ai's NetworkTopologyName: a DNS-1123 label starting with a letter.
    name       text NOT NULL UNIQUE CHECK (name ~ '^[a-z]([a-z0-9-]*[a-z0-9])?$' AND length(name) <= 63),
    -- At most 16 levels, as Kueue's Topology allows; each a node label key.
    levels     text[] NOT NULL CHECK (cardinality(levels) BETWEEN 1 AND 16),
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text NOT NULL DEFAULT 'system'
);

-- A node pool's topology: the one its workloads' topology requests are placed by. A topology
-- that pools refer to cannot be deleted (RESTRICT): the store says which pools.
ALTER TABLE node_pools ADD COLUMN network_topology_id uuid REFERENCES network_topologies (id) ON DELETE RESTRICT;
CREATE INDEX node_pools_network_topology_id ON node_pools (network_topology_id) WHERE network_topology_id IS NOT NULL;
