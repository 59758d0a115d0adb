DROP INDEX IF EXISTS node_pools_network_topology_id;
ALTER TABLE node_pools DROP COLUMN IF EXISTS network_topology_id;
DROP TABLE IF EXISTS network_topologies;
