package store

// Run:ai's control-plane API names things an Arbiter installation has exactly one of, among
// them the cluster: its schemas require the cluster's id on node pools, departments, projects
// and workloads, and its lists filter by it. Arbiter answers the one cluster's id as a constant,
// the same on every replica and across restarts.
const ClusterName = "arbiter"

// ClusterID is the installation's one cluster's id.
var ClusterID = SeedID("cluster", ClusterName)

// clusterIDColumn is ClusterID as a list field's SQL expression: a constant every row shares.
var clusterIDColumn = "'" + ClusterID.String() + "'::text"

// notMeasured are Run:ai's usage-average list fields of an organization unit: Arbiter keeps
// no usage history yet, so it can neither filter nor sort by them.
func notMeasured(fields map[string]string) map[string]string {
	for _, span := range []string{"24h", "7d", "30d"} {
		fields["avgGpuAllocation"+span] = "Arbiter keeps no GPU usage history yet"
		fields["avgGpuUtilization"+span] = "Arbiter does not measure GPU utilization"
		fields["avgGpuMemoryUtilization"+span] = "Arbiter does not measure GPU memory utilization"
	}
	return fields
}

// liveAllocation is why a unit's allocated GPUs cannot be filtered or sorted by: they are the
// scheduler's live figures (the unit's status), not stored.
const liveAllocation = "allocated GPUs are the scheduler's live figures (see the status), not stored"
