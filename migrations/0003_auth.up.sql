-- Schema 0003: login, roles and API access (security.md): users, access rules, API keys,
-- server-side sessions (the table scs's pgxstore expects), login throttling, and an
-- append-only guard on the audit log.

CREATE TABLE users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    issuer        text NOT NULL,             -- the OIDC issuer URL, or 'local' for local accounts
    subject       text NOT NULL,             -- the OIDC sub, or the local user name
    email         text NOT NULL DEFAULT '',
    name          text NOT NULL DEFAULT '',
    groups        text[] NOT NULL DEFAULT '{}',
    password_hash text NOT NULL DEFAULT '',  -- argon2id (PHC string); local accounts only
    last_login_at timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (issuer, subject)
);

-- An access rule binds a subject (a user, by email or subject; or an OIDC group) to a role at a
-- scope. scope_id names the department or project (no foreign key: those tables belong to
-- another migration; deleting a department or project deletes its rules in the same transaction).
CREATE TABLE access_rules (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    subject_type text NOT NULL CHECK (subject_type IN ('user', 'group')),
    subject      text NOT NULL CHECK (subject <> ''),
    role         text NOT NULL CHECK (role IN ('admin', 'department-admin', 'research-manager', 'researcher', 'viewer')),
    scope_type   text NOT NULL CHECK (scope_type IN ('system', 'department', 'project')),
    scope_id     uuid,
    created_at   timestamptz NOT NULL DEFAULT now(),
    created_by   text NOT NULL DEFAULT 'system',
    CHECK ((scope_type = 'system') = (scope_id IS NULL)),
    CHECK (role <> 'admin' OR scope_type = 'system'),
    CHECK (role <> 'department-admin' OR scope_type = 'department')
);
CREATE UNIQUE INDEX access_rules_unique ON access_rules (subject_type, lower(subject), role, scope_type, scope_id) NULLS NOT DISTINCT;

-- API keys for service accounts: only a SHA-256 of the secret is kept (the secret is 256 random
-- bits, shown once); the key carries its own role binding.
CREATE TABLE api_keys (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         text NOT NULL UNIQUE CHECK (name <> ''),
    secret_hash  bytea NOT NULL,
    role         text NOT NULL CHECK (role IN ('admin', 'department-admin', 'research-manager', 'researcher', 'viewer')),
    scope_type   text NOT NULL CHECK (scope_type IN ('system', 'department', 'project')),
    scope_id     uuid,
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz,
    last_used_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    created_by   text NOT NULL,
    CHECK ((scope_type = 'system') = (scope_id IS NULL))
);

-- Server-side sessions: the schema github.com/alexedwards/scs/pgxstore reads and writes.
CREATE TABLE sessions (
    token  text PRIMARY KEY,
    data   bytea NOT NULL,
    expiry timestamptz NOT NULL
);
CREATE INDEX sessions_expiry_idx ON sessions (expiry);

-- Failed local logins per key ('account:<name>' or 'address:<ip>'), shared by every replica.
CREATE TABLE login_failures (
    key           text PRIMARY KEY,
    failures      integer NOT NULL,
    last_failed   timestamptz NOT NULL,
    blocked_until timestamptz NOT NULL
);

-- The audit log is append-only for the application.
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only';
END $$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
CREATE INDEX audit_log_subject ON audit_log (subject, id DESC);
