-- Secrets every replica shares, generated once by the first replica that needs one
-- (security.md "CSRF and headers"): the key that signs the login form's CSRF token.
CREATE TABLE server_keys (
    name       text PRIMARY KEY,
    secret     bytea NOT NULL CHECK (length(secret) >= 32),
    created_at timestamptz NOT NULL DEFAULT now()
);
