-- Schema 0017: a person's own access keys beside the service accounts' API keys, and the
-- states Run:ai's service accounts have (enabled, updated). A person's key has an owner and no
-- role of its own (it acts with the person's access rules at each use); a service account's
-- key has a role and a scope and no owner. Deleting the person deletes their keys.

ALTER TABLE api_keys
    ADD COLUMN owner_user_id uuid REFERENCES users (id) ON DELETE CASCADE,
    ADD COLUMN disabled_at   timestamptz,
    -- When the key's credential last changed (made, secret regenerated, enabled or
    -- disabled): an access token issued before it is refused.
    ADD COLUMN updated_at    timestamptz NOT NULL DEFAULT now(),
    ALTER COLUMN role DROP NOT NULL,
    ALTER COLUMN scope_type DROP NOT NULL,
    ADD CONSTRAINT api_keys_owner_or_role CHECK (
        (owner_user_id IS NULL AND role IS NOT NULL AND scope_type IS NOT NULL)
        OR (owner_user_id IS NOT NULL AND role IS NULL AND scope_type IS NULL AND scope_id IS NULL));

-- Names: unique among the service accounts not deleted (a deleted one's row stays, so the
-- audit log keeps naming it), and among each person's own keys.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_name_key;
CREATE UNIQUE INDEX api_keys_service_account_name ON api_keys (name) WHERE owner_user_id IS NULL AND revoked_at IS NULL;
CREATE UNIQUE INDEX api_keys_owner_name ON api_keys (owner_user_id, name) WHERE owner_user_id IS NOT NULL;
