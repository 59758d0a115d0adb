package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

var reportMaker = store.Actor{Subject: "finance@example.org", SubjectType: "user"}

func newReport(name string) store.NewUsageReport {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	return store.NewUsageReport{ID: uuid.New(), Name: name, Start: start, End: start.AddDate(0, 1, 0),
		CSV: []byte("date,allocatedGpuHours\n2026-11-01,4\n"), Rows: 1}
}

// At most MaxUsageReports reports are kept, even when the last places are taken by creations
// at once; a report past its retention is gone to reads and is deleted by the next creation,
// which frees its place.
func TestUsageReportsAreBoundedInNumberAndTime(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	var oldest store.UsageReport
	for i := range store.MaxUsageReports - 2 {
		r, err := st.CreateUsageReport(ctx, newReport(fmt.Sprintf("report %d", i)), reportMaker)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			oldest = r
		}
	}
	// Four creations at once for the last two places.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Go(func() {
			_, err := st.CreateUsageReport(ctx, newReport(fmt.Sprintf("late %d", i)), reportMaker)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	refused := 0
	for err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, store.ErrInvalid):
			refused++
		default:
			t.Fatal(err)
		}
	}
	n, err := st.CountUsageReports(ctx, listquery.Query{})
	if err != nil || n != store.MaxUsageReports || refused != 2 {
		t.Fatalf("after four creations for two places: %d kept (%v), %d refused; want %d kept, 2 refused", n, err, refused, store.MaxUsageReports)
	}

	// The oldest passes its retention: it is no longer read, and the next creation takes its place.
	if _, err := st.Pool().Exec(ctx, `UPDATE usage_reports SET created_at = now() - $1::interval WHERE id = $2`,
		fmt.Sprintf("%d seconds", int(store.UsageReportRetention.Seconds())+60), oldest.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UsageReport(ctx, oldest.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a report past its retention reads as %v, want not found", err)
	}
	if err := st.DeleteUsageReport(ctx, oldest.ID, reportMaker); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting a report past its retention: %v, want not found", err)
	}
	if _, err := st.CreateUsageReport(ctx, newReport("after the expiry"), reportMaker); err != nil {
		t.Fatalf("a creation once one report expired: %v", err)
	}
	var rows int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM usage_reports`).Scan(&rows); err != nil || rows != store.MaxUsageReports {
		t.Errorf("the table holds %d rows (%v), want %d: the expired report deleted", rows, err, store.MaxUsageReports)
	}
}

// A report's file is kept as made and read back whole; a report over MaxUsageReportBytes is
// refused naming the period, and nothing is written.
func TestUsageReportKeepsItsCSVAndRefusesAnOversizedOne(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	n := newReport("November")
	made, err := st.CreateUsageReport(ctx, n, reportMaker)
	if err != nil {
		t.Fatal(err)
	}
	got, csv, err := st.UsageReportCSV(ctx, made.ID)
	if err != nil || string(csv) != string(n.CSV) || got.Status != "Ready" || got.CreatedBy != reportMaker.Subject || got.Rows != 1 {
		t.Errorf("read back %+v %q (%v), want the CSV as made, Ready, by its maker", got, csv, err)
	}
	big := newReport("too big")
	big.CSV = make([]byte, store.MaxUsageReportBytes+1)
	if _, err := st.CreateUsageReport(ctx, big, reportMaker); !errors.Is(err, store.ErrInvalid) || store.FieldOf(err) != "end" {
		t.Errorf("an oversized report: %v (field %q), want invalid naming end", err, store.FieldOf(err))
	}
	if count, _ := st.CountUsageReports(ctx, listquery.Query{}); count != 1 {
		t.Errorf("%d reports kept, want 1", count)
	}
}
