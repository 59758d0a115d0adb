package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Consumption reports are computed whole when they are made (the web layer reads the usage
// history and writes the CSV) and stored with their CSV, so a report reads the same on every
// replica and after the history's raw rows have been rolled up. The table is bounded three ways.
const (
	// MaxUsageReports is how many reports are kept at once; making one more is refused until
	// one is deleted or expires.
	MaxUsageReports = 100
	// MaxUsageReportBytes bounds one report's CSV: 100 reports at most this size bound the table.
	MaxUsageReportBytes = 8 << 20
	// UsageReportRetention is how long a report is kept after it was made; older ones are
	// deleted when the next one is made and are not listed meanwhile.
	UsageReportRetention = 30 * 24 * time.Hour
)

// UsageReport is a consumption report as listed: everything but its CSV.
type UsageReport struct {
	ID              uuid.UUID `db:"id"`
	Name            string    `db:"name"`
	Description     string    `db:"description"`
	Start           time.Time `db:"start_at"`
	End             time.Time `db:"end_at"`
	GroupBy         *string   `db:"group_by"` // Nodepool, Project, Department, Cluster; nil: not grouped
	FilterBy        []string  `db:"filter_by"`
	CreatedAt       time.Time `db:"created_at"`
	CreatedBy       string    `db:"created_by"`
	Status          string    `db:"status"` // Pending, Processing, Ready, Failed
	StatusUpdatedAt time.Time `db:"status_updated_at"`
	StatusMessage   string    `db:"status_message"`
	Rows            int       `db:"csv_rows"` // data rows of the CSV, its header left out
}

const usageReportColumns = `id, name, description, start_at, end_at, group_by, filter_by, created_at, created_by,
	status, status_updated_at, status_message, csv_rows`

// NewUsageReport is a report computed and ready to keep.
type NewUsageReport struct {
	ID                uuid.UUID
	Name, Description string
	Start, End        time.Time
	GroupBy           *string
	FilterBy          []string
	CSV               []byte
	Rows              int
	StatusMessage     string
}

// UsageReportSpec is what the report list filters and sorts by (Run:ai's names).
var UsageReportSpec = listquery.Spec{
	Fields: map[string]listquery.Field{
		"name":      {Kind: listquery.String, Column: "name", Sortable: true},
		"createdAt": {Kind: listquery.Time, Column: "created_at", Sortable: true},
		"createdBy": {Kind: listquery.String, Column: "created_by", Sortable: true},
		"status":    {Kind: listquery.String, Column: "status", Sortable: true},
	},
	DefaultSort:  "createdAt",
	TieBreak:     "id",
	SearchColumn: "name",
	Paged:        true,
}

// unexpired is the condition every read adds: a report past its retention is gone to callers
// even before the next creation deletes it.
const unexpired = `created_at > now() - make_interval(secs => $1)`

func retentionSeconds() float64 { return UsageReportRetention.Seconds() }

// CreateUsageReport keeps a computed report as Ready, with its audit row. Expired reports are
// deleted first and the rest counted under a table lock, so two creations at once cannot pass
// MaxUsageReports together.
func (s *Store) CreateUsageReport(ctx context.Context, n NewUsageReport, by Actor) (UsageReport, error) {
	n.Name = strings.TrimSpace(n.Name)
	switch {
	case n.Name == "":
		return UsageReport{}, InvalidField("name", "a report needs a name that says what it is for")
	case len(n.Name) > 200:
		return UsageReport{}, InvalidField("name", "a report's name is at most 200 characters")
	case len(n.Description) > 2000:
		return UsageReport{}, InvalidField("description", "a report's description is at most 2,000 characters")
	case !n.End.After(n.Start):
		return UsageReport{}, InvalidField("end", "a report's end must be after its start")
	case len(n.CSV) > MaxUsageReportBytes:
		return UsageReport{}, InvalidField("end", "the report would be %d bytes, over the %d a report may hold; shorten the period, group it, or filter it", len(n.CSV), MaxUsageReportBytes)
	}
	if n.FilterBy == nil {
		n.FilterBy = []string{}
	}
	var out UsageReport
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE usage_reports IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM usage_reports WHERE NOT (`+unexpired+`)`, retentionSeconds()); err != nil {
			return err
		}
		var held int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM usage_reports`).Scan(&held); err != nil {
			return err
		}
		if held >= MaxUsageReports {
			return InvalidField("name", "there are already %d reports, the most kept at once; delete one you have downloaded first", held)
		}
		rows, err := tx.Query(ctx, `
			INSERT INTO usage_reports (id, name, description, start_at, end_at, group_by, filter_by, created_by,
			                           status, status_message, csv, csv_rows)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'Ready', $9, $10, $11) RETURNING `+usageReportColumns,
			n.ID, n.Name, n.Description, n.Start, n.End, n.GroupBy, n.FilterBy, by.Subject, n.StatusMessage, n.CSV, n.Rows)
		if out, err = scanOne[UsageReport](rows, err, "report"); err != nil {
			return err
		}
		e := by.entry("create", "report", n.ID.String(), n.Name)
		e.HTTPStatus = 202
		e.Changes = map[string]any{"start": n.Start, "end": n.End, "groupBy": n.GroupBy, "filterBy": n.FilterBy, "rows": n.Rows}
		return insertAudit(ctx, tx, e)
	})
	return out, classify(err)
}

// UsageReports lists one page of the kept reports.
func (s *Store) UsageReports(ctx context.Context, q listquery.Query) ([]UsageReport, *int, error) {
	args := listquery.Args{retentionSeconds()}
	sql := `SELECT ` + usageReportColumns + ` FROM usage_reports WHERE ` + unexpired + ` AND ` +
		q.Where(UsageReportSpec, &args) + ` ORDER BY ` + q.OrderBy(UsageReportSpec) + ` ` + q.Page(&args)
	rows, err := s.pool.Query(ctx, sql, args...)
	list, err := scanAll[UsageReport](rows, err)
	if err != nil {
		return nil, nil, err
	}
	list, next := listquery.Next(q, list)
	return list, next, nil
}

// CountUsageReports counts the kept reports q's filters and search select.
func (s *Store) CountUsageReports(ctx context.Context, q listquery.Query) (int, error) {
	args := listquery.Args{retentionSeconds()}
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM usage_reports WHERE `+unexpired+` AND `+q.Where(UsageReportSpec, &args), args...).Scan(&n)
	return n, classify(err)
}

// UsageReport returns one kept report.
func (s *Store) UsageReport(ctx context.Context, id uuid.UUID) (UsageReport, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+usageReportColumns+` FROM usage_reports WHERE id = $2 AND `+unexpired, retentionSeconds(), id)
	return scanOne[UsageReport](rows, err, "report "+id.String())
}

// UsageReportCSV returns one kept report and its CSV.
func (s *Store) UsageReportCSV(ctx context.Context, id uuid.UUID) (UsageReport, []byte, error) {
	type withCSV struct {
		UsageReport
		CSV []byte `db:"csv"`
	}
	rows, err := s.pool.Query(ctx, `SELECT `+usageReportColumns+`, csv FROM usage_reports WHERE id = $2 AND `+unexpired, retentionSeconds(), id)
	r, err := scanOne[withCSV](rows, err, "report "+id.String())
	return r.UsageReport, r.CSV, err
}

// DeleteUsageReport deletes a kept report, with its audit row.
func (s *Store) DeleteUsageReport(ctx context.Context, id uuid.UUID, by Actor) error {
	return s.InTx(ctx, func(tx pgx.Tx) error {
		var name string
		err := tx.QueryRow(ctx, `DELETE FROM usage_reports WHERE id = $2 AND `+unexpired+` RETURNING name`, retentionSeconds(), id).Scan(&name)
		if errors.Is(err, pgx.ErrNoRows) {
			return NotFound("report %s was not found", id)
		}
		if err != nil {
			return err
		}
		e := by.entry("delete", "report", id.String(), name)
		e.HTTPStatus = 204
		return insertAudit(ctx, tx, e)
	})
}
