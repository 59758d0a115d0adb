DROP TABLE usage_rollups;
DROP TABLE usage_project_days;
DROP TABLE usage_pool_days;
DROP TABLE usage_project_hours;
DROP TABLE usage_pool_hours;
DROP TABLE usage_samples;
DROP TABLE usage_rosters;
