-- Schema 0018: local users managed by admins (docs/security.md "Local users"). created_by is
-- the admin who created a local account; 'system' for the bootstrap admin and for people whose
-- first sign-in made their row. signed_out_at ends every session and access token the user
-- got before it (an admin's logout of the user, a password reset); NULL: never. A local name
-- is one account whatever its case: sign-in finds it by lower(subject).
ALTER TABLE users
    ADD COLUMN created_by    text NOT NULL DEFAULT 'system',
    ADD COLUMN signed_out_at timestamptz;
CREATE UNIQUE INDEX users_local_name ON users (lower(subject)) WHERE issuer = 'local';
