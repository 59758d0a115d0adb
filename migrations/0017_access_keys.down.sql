-- A person's keys cannot be service accounts' keys (they have no role): they are removed.
-- Service accounts that reuse a deleted one's name keep the newest name; the older rows are
-- renamed so that names are unique again.
DELETE FROM api_keys WHERE owner_user_id IS NOT NULL;
UPDATE api_keys k SET name = k.name || ' (' || k.id || ')'
    WHERE EXISTS (SELECT 1 FROM api_keys o WHERE o.name = k.name AND o.id <> k.id AND o.created_at > k.created_at);
DROP INDEX api_keys_owner_name;
DROP INDEX api_keys_service_account_name;
ALTER TABLE api_keys
    ADD CONSTRAINT api_keys_name_key UNIQUE (name),
    DROP CONSTRAINT api_keys_owner_or_role,
    ALTER COLUMN role SET NOT NULL,
    ALTER COLUMN scope_type SET NOT NULL,
    DROP COLUMN updated_at,
    DROP COLUMN disabled_at,
    DROP COLUMN owner_user_id;
