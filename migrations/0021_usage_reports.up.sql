-- Consumption reports (Run:ai's /api/v1/org-unit/reports): GPU-hours per day over a period,
-- grouped by project, department, node pool or the cluster, computed from the usage history
-- when the report is created and kept as the CSV it downloads as. The table is bounded by the
-- web layer: at most store.MaxUsageReports reports, each at most store.MaxUsageReportBytes, and
-- reports older than store.UsageReportRetention are deleted when the next one is created.
CREATE TABLE usage_reports (
    id                uuid PRIMARY KEY,
    name              text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description       text NOT NULL DEFAULT '' CHECK (length(description) <= 2000),
    start_at          timestamptz NOT NULL,
    end_at            timestamptz NOT NULL CHECK (end_at > start_at),
    group_by          text CHECK (group_by IN ('Nodepool', 'Project', 'Department', 'Cluster')),
    filter_by         text[] NOT NULL DEFAULT '{}',
    created_at        timestamptz NOT NULL DEFAULT now(),
    created_by        text NOT NULL,
    status            text NOT NULL CHECK (status IN ('Pending', 'Processing', 'Ready', 'Failed')),
    status_updated_at timestamptz NOT NULL DEFAULT now(),
    status_message    text NOT NULL DEFAULT '',
    csv               bytea NOT NULL DEFAULT ''::bytea,
    csv_rows          integer NOT NULL DEFAULT 0 CHECK (csv_rows >= 0)
);
CREATE INDEX usage_reports_created ON usage_reports (created_at, id);
