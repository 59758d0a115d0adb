-- The audit log becomes a table partitioned by month of its timestamp (UTC), so that months
-- past the retention (docs/operations.md "Audit log retention") are dropped whole and no row is
-- ever deleted. Rows keep their ids; the id sequence carries on. A DEFAULT partition takes a
-- row whose month has no partition yet (the leader creates them ahead), so an insert never
-- fails for want of one.
ALTER TABLE audit_log RENAME TO audit_log_plain;
ALTER INDEX audit_log_pkey RENAME TO audit_log_plain_pkey;
ALTER INDEX audit_log_at RENAME TO audit_log_plain_at;
ALTER INDEX audit_log_subject RENAME TO audit_log_plain_subject;

-- A partitioned table's primary key must hold the partition key: (id, at). Ids stay unique
-- by the sequence.
CREATE TABLE audit_log (
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
    PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
ALTER SEQUENCE audit_log_id_seq OWNED BY audit_log.id;
CREATE INDEX audit_log_at ON audit_log (at DESC);
CREATE INDEX audit_log_subject ON audit_log (subject, id DESC);

-- One partition per month from the oldest row's to the newest's, named audit_log_YYYY_MM (none
-- for an empty log). The months from now on are the leader's to make (store.KeepAuditPartitions,
-- at its start and hourly), so the schema this makes depends on the rows alone, not on the day.
DO $$
DECLARE
    month timestamptz;
BEGIN
    FOR month IN SELECT generate_series(date_trunc('month', min(at), 'UTC'), date_trunc('month', max(at), 'UTC'), interval '1 month')
            FROM audit_log_plain
    LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF audit_log FOR VALUES FROM (%L) TO (%L)',
            'audit_log_' || to_char(month AT TIME ZONE 'UTC', 'YYYY_MM'), month,
            (month AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC');
    END LOOP;
END $$;
CREATE TABLE audit_log_default PARTITION OF audit_log DEFAULT;

INSERT INTO audit_log SELECT * FROM audit_log_plain;
DROP TABLE audit_log_plain;

-- Append-only, as before: the statement trigger on the table refuses UPDATE, DELETE and
-- TRUNCATE of the log; the row trigger, which PostgreSQL clones onto every partition (those
-- made later too), refuses UPDATE and DELETE addressed to a partition directly. Retention
-- drops whole partitions (DROP TABLE fires no trigger).
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_append_only_rows BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
