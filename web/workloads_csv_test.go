package web_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
)

// gatedWorkloads is the store with its later pages held: a page query after the first waits
// until gate is closed, so a test can see what the client got while the export is unfinished.
type gatedWorkloads struct {
	web.WorkloadStore
	st    *store.Store
	gate  chan struct{}
	later atomic.Int64 // page queries after the first that were answered
	once  sync.Once
}

func (g *gatedWorkloads) open() { g.once.Do(func() { close(g.gate) }) }

func (g *gatedWorkloads) wait(ctx context.Context) {
	select {
	case <-g.gate:
	case <-ctx.Done():
	}
	g.later.Add(1)
}

func (g *gatedWorkloads) VisibleWorkloads(ctx context.Context, q listquery.Query, fin bool, scope store.WorkloadScope) ([]store.WorkloadRecord, *int, error) {
	if q.Offset > 0 {
		g.wait(ctx)
	}
	return g.WorkloadStore.VisibleWorkloads(ctx, q, fin, scope)
}

func (g *gatedWorkloads) VisibleWorkloadsAfter(ctx context.Context, q listquery.Query, fin bool, scope store.WorkloadScope, after *store.WorkloadCursor, limit int) ([]store.WorkloadRecord, *store.WorkloadCursor, error) {
	if after != nil {
		g.wait(ctx)
	}
	return g.st.VisibleWorkloadsAfter(ctx, q, fin, scope, after, limit)
}

// newCSVFixture is a console over n generated workload records (every tenth Running, the
// rest Pending, none finished), with many equal sort keys: priority value i%3*10, queued in groups of 7 a
// second, no queue position. The gate starts closed unless open.
func newCSVFixture(t testing.TB, n int, open bool) (*httptest.Server, *gatedWorkloads, *pgxpool.Pool) {
	t.Helper()
	return newCSVFixtureTimeout(t, n, open, 0)
}

// newCSVFixtureTimeout is newCSVFixture with the server's write timeout set (0: none).
func newCSVFixtureTimeout(t testing.TB, n int, open bool, writeTimeout time.Duration) (*httptest.Server, *gatedWorkloads, *pgxpool.Pool) {
	t.Helper()
	pool := testdb.New(t)
	st := store.New(pool)
	if _, err := pool.Exec(context.Background(), `INSERT INTO workloads (uid, namespace, name, kind, phase, priority_value, queued_at, requested_gpus, submitter)
		SELECT 'w-' || md5(i::text), 'ns', 'job-' || i, 'Job', CASE WHEN i % 10 = 0 THEN 'Running' ELSE 'Pending' END,
			(i % 3) * 10, timestamptz '2025-03-01 09:00:00Z' + (i / 7) * interval '1 second', i % 5, 'user' || (i % 4)
		FROM generate_series(1, $1) i`, n); err != nil {
		t.Fatal(err)
	}
	g := &gatedWorkloads{st: st, gate: make(chan struct{})}
	if open {
		g.open()
	}
	d := deps(st)
	g.WorkloadStore = st
	d.Workloads = g
	srv := httptest.NewUnstartedServer(web.New(d))
	srv.Config.WriteTimeout = writeTimeout
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(g.open) // before srv.Close, which waits for the held handlers
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	return srv, g, pool
}

// startCSV GETs path and returns the answer once its headers arrive, or nil after wait.
func startCSV(t *testing.T, srv *httptest.Server, path string, wait time.Duration) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tokenOf(srv))
	got := make(chan *http.Response, 1)
	go func() {
		res, err := srv.Client().Do(req)
		if err != nil {
			got <- nil
			return
		}
		got <- res
	}()
	select {
	case res := <-got:
		if res != nil {
			t.Cleanup(func() { res.Body.Close() })
		}
		return res
	case <-time.After(wait):
		return nil
	}
}

func TestWorkloadsCSVIsStreamed(t *testing.T) {
	srv, g, _ := newCSVFixture(t, 20000, false)
	start := time.Now()
	res := startCSV(t, srv, "/workloads.csv", 5*time.Second)
	if res == nil {
		t.Fatal("no answer while the later pages were held: the export is not written as it is read")
	}
	r := bufio.NewReader(res.Body)
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "id,name,") {
		t.Fatalf("first line %q, %v", line, err)
	}
	second, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(second, "w-") {
		t.Fatalf("second line %q, %v", second, err)
	}
	if n := g.later.Load(); n != 0 {
		t.Errorf("%d later pages were read before the first rows arrived", n)
	}
	first := time.Since(start)
	g.open()
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 20000-1 { // the rows but the first, which was read above
		t.Errorf("%d rows, want 20000", len(rows)+1)
	}
	t.Logf("20k records: first row after %v, all after %v, %d later pages", first, time.Since(start), g.later.Load())
}

// TestWorkloadsCSVKeysetOrder: across page boundaries with many equal sort keys, the export
// is exactly the filtered rows, each once, in the order of the sort key and then the uid.
func TestWorkloadsCSVKeysetOrder(t *testing.T) {
	srv, _, pool := newCSVFixture(t, 2600, true)
	// A third of them get one of four queue positions; the rest have none (NULL, last).
	if _, err := pool.Exec(context.Background(), `UPDATE workloads SET queue_position = 1 + (hashtext(uid) & 3) WHERE priority_value = 10`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ query, order string }{
		{"?sortBy=priorityValue&sortOrder=desc", "priority_value DESC, uid DESC"},
		{"?sortBy=priorityValue", "priority_value ASC, uid ASC"},
		{"?sortBy=createdAt", "queued_at ASC, uid ASC"},
		{"?sortBy=queuePosition", "nullif(queue_position, 0) ASC NULLS LAST, uid ASC"},
		{"?sortBy=queuePosition&sortOrder=desc", "nullif(queue_position, 0) DESC NULLS LAST, uid DESC"},
		{"?sortBy=submitter&search=job-1", "submitter ASC, uid ASC"},
	} {
		where := "finished_at IS NULL"
		if strings.Contains(tc.query, "search") {
			where += " AND strpos(name, 'job-1') > 0"
		}
		rows, err := pool.Query(context.Background(), `SELECT uid FROM workloads WHERE `+where+` ORDER BY `+tc.order)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for rows.Next() {
			var uid string
			if err := rows.Scan(&uid); err != nil {
				t.Fatal(err)
			}
			want = append(want, uid)
		}
		rows.Close()
		res := startCSV(t, srv, "/workloads.csv"+tc.query, 10*time.Second)
		if res == nil || res.StatusCode != 200 {
			t.Fatalf("%s: %v", tc.query, res)
		}
		all, err := csv.NewReader(res.Body).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range all[1:] {
			got = append(got, r[0])
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: %d rows, want %d (-want +got):\n%.2000s", tc.query, len(got), len(want), diff)
		}
	}
}

// TestWorkloadsCSVBoundsExports: two exports run at once; a third is refused with 429, a
// sentence and Retry-After, and runs once one of them ended.
func TestWorkloadsCSVBoundsExports(t *testing.T) {
	srv, g, _ := newCSVFixture(t, 2600, false)
	var running []*http.Response
	for i := range 2 {
		res := startCSV(t, srv, "/workloads.csv", 5*time.Second)
		if res == nil || res.StatusCode != 200 {
			t.Fatalf("export %d: %v", i+1, res)
		}
		running = append(running, res)
	}
	third := startCSV(t, srv, "/workloads.csv", 5*time.Second)
	if third == nil {
		t.Fatal("a third export got no answer while two were running")
	}
	body, _ := io.ReadAll(third.Body)
	if third.StatusCode != http.StatusTooManyRequests || third.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "CSV exports are already running") {
		t.Errorf("third export: %d Retry-After %q %.300s", third.StatusCode, third.Header.Get("Retry-After"), body)
	}
	g.open()
	for _, res := range running {
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	// The slot is given back as the handler returns, just after the last byte.
	poll.UntilNil(t, "an export after the two ended starts", 5*time.Second, func() error {
		switch again := startCSV(t, srv, "/workloads.csv", 5*time.Second); {
		case again == nil:
			return fmt.Errorf("no answer within 5 s")
		case again.StatusCode != 200:
			return fmt.Errorf("the export answered %d", again.StatusCode)
		}
		return nil
	})
}

// TestWorkloadsCSVNeutralisesFormulas: a text cell a spreadsheet would run as a formula gets a
// leading quote; numbers, negative ones too, are written as they are.
func TestWorkloadsCSVNeutralisesFormulas(t *testing.T) {
	srv, _, pool := newCSVFixture(t, 0, true)
	for i, name := range []string{"=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "\tx", "\rx", "plain-name"} {
		if _, err := pool.Exec(context.Background(), `INSERT INTO workloads (uid, namespace, name, kind, phase, queued_at, requested_gpus, submitter, reason)
			VALUES ($1, '-ns', $2, 'Job', 'Pending', timestamptz '2025-03-01 09:00:00Z' + $3 * interval '1 second', -5, '=cmd|'' /C calc''!A0', '@x')`,
			"u"+string(rune('a'+i)), name, i); err != nil {
			t.Fatal(err)
		}
	}
	res := startCSV(t, srv, "/workloads.csv", 10*time.Second)
	if res == nil || res.StatusCode != 200 {
		t.Fatalf("%v", res)
	}
	all, err := csv.NewReader(res.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range all[1:] {
		names = append(names, r[1])
		if r[2] != "'-ns" || r[9] != "'@x" || r[16] != "'=cmd|' /C calc'!A0" || r[11] != "-5" {
			t.Errorf("row %s: namespace %q reason %q submitter %q requestedGpus %q", r[0], r[2], r[9], r[16], r[11])
		}
	}
	want := []string{"'=HYPERLINK(\"http://x\")", "'+1", "'-2", "'@SUM(A1)", "'\tx", "'\rx", "plain-name"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

// TestWorkloadsCSVOutlivesTheWriteTimeout: the export extends the server's write deadline for
// itself, so one that takes longer than the server's write timeout still ends whole.
func TestWorkloadsCSVOutlivesTheWriteTimeout(t *testing.T) {
	srv, g, _ := newCSVFixtureTimeout(t, 2600, false, 500*time.Millisecond)
	res := startCSV(t, srv, "/workloads.csv", 5*time.Second)
	if res == nil || res.StatusCode != 200 {
		t.Fatalf("%v", res)
	}
	time.Sleep(1500 * time.Millisecond) // past the server's write timeout
	g.open()
	rows, err := csv.NewReader(res.Body).ReadAll()
	if err != nil || len(rows) != 2601 {
		t.Errorf("%d rows, %v; want 2600 and the header", len(rows), err)
	}
}
