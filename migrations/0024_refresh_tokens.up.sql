-- Refresh tokens of POST /api/v1/token (Run:ai's refresh_token grant): what the command line
-- keeps instead of a secret, traded for a new access token until it expires or is revoked
-- (deleted: `arbiter logout`). Only the secret's SHA-256 is kept (it is 256 random bits). A
-- token stands for a local account or an API key; a key's token carries the fingerprint of the
-- key's secret when it was issued, so a regenerated secret ends it. The store keeps at most 20
-- a subject (issuing one more deletes its oldest) and deletes expired ones when it issues.
CREATE TABLE refresh_tokens (
    id           uuid PRIMARY KEY,
    secret_hash  bytea NOT NULL,
    subject_kind text NOT NULL CHECK (subject_kind IN ('user', 'api-key')),
    subject_id   uuid NOT NULL,
    key_stamp    bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX refresh_tokens_subject ON refresh_tokens (subject_kind, subject_id, created_at);
