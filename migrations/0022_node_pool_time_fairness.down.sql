DROP TABLE node_pool_time_fairness;
