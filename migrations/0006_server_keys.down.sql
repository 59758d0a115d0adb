DROP TABLE IF EXISTS server_keys;
