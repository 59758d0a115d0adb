DROP TABLE IF EXISTS project_quotas;
DROP TABLE IF EXISTS project_namespaces;
DROP TABLE IF EXISTS projects;
DROP TABLE IF EXISTS department_quotas;
DROP TABLE IF EXISTS departments;
DROP TABLE IF EXISTS node_pools;
