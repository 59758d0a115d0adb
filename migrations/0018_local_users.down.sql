DROP INDEX users_local_name;
ALTER TABLE users
    DROP COLUMN signed_out_at,
    DROP COLUMN created_by;
