-- Back to the plain table of 0001 and 0003, every row kept with its id.
CREATE TABLE audit_log_plain (
    id           bigint NOT NULL DEFAULT nextval('audit_log_id_seq'::regclass),
    at           timestamptz NOT NULL DEFAULT now(),
    subject      text NOT NULL,
    subject_type text NOT NULL,
    source_ip    text NOT NULL DEFAULT '',
    action       text NOT NULL,
    http_method  text NOT NULL DEFAULT '',
    entity_type  text NOT NULL,
    entity_id    text NOT NULL DEFAULT '',
    entity_name  text NOT NULL DEFAULT '',
    result       text NOT NULL,
    http_status  integer NOT NULL DEFAULT 0,
    request_id   text NOT NULL DEFAULT '',
    changes      jsonb NOT NULL DEFAULT '{}'::jsonb,
    CONSTRAINT audit_log_plain_pkey PRIMARY KEY (id)
);
INSERT INTO audit_log_plain SELECT * FROM audit_log;
ALTER SEQUENCE audit_log_id_seq OWNED BY audit_log_plain.id;
DROP TABLE audit_log; -- and its partitions

ALTER TABLE audit_log_plain RENAME TO audit_log;
ALTER TABLE audit_log RENAME CONSTRAINT audit_log_plain_pkey TO audit_log_pkey;
CREATE INDEX audit_log_at ON audit_log (at DESC);
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
CREATE INDEX audit_log_subject ON audit_log (subject, id DESC);
