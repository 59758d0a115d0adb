package testdb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/migrations"
)

func TestMain(m *testing.M) { Main(m) }

func TestClonesAreIsolated(t *testing.T) {
	t.Parallel()
	a, b := New(t), New(t)
	// The same table in both, so that only the rows can differ.
	if _, err := a.Exec(t.Context(), "create table probe(v text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Exec(t.Context(), "create table probe(v text)"); err != nil {
		t.Fatalf("the table created in one clone already exists in the other: %v", err)
	}
	if _, err := a.Exec(t.Context(), "insert into probe values ('only in a')"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRow(t.Context(), "select count(*) from probe").Scan(&n); err != nil || n != 0 {
		t.Errorf("the other clone sees %d rows (%v), want 0", n, err)
	}
	if err := a.QueryRow(t.Context(), "select count(*) from probe").Scan(&n); err != nil || n != 1 {
		t.Errorf("the clone that inserted sees %d rows (%v), want 1", n, err)
	}
}

func TestTemplateIsMigrated(t *testing.T) {
	t.Parallel()
	// The template refuses connections (they would block cloning), and a clone is a copy of
	// it, so check through a clone.
	dbURL := NewURL(t)
	version, dirty, applied, err := migrations.Version(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	if !applied || dirty || version != migrations.Latest() {
		t.Errorf("schema_migrations: version %d, dirty %v, applied %v; want version %d, clean", version, dirty, applied, migrations.Latest())
	}

	e, _ := get()
	if !strings.Contains(e.template, migrations.Hash()[:16]) {
		t.Errorf("template %q is not named after the migrations' hash %s", e.template, migrations.Hash())
	}
	var isTemplate bool
	if err := e.admin.QueryRow(t.Context(), "select datistemplate from pg_database where datname = $1", e.template).Scan(&isTemplate); err != nil || !isTemplate {
		t.Errorf("template %s: datistemplate = %v, %v", e.template, isTemplate, err)
	}
}

func TestCloneIsDroppedAfterTest(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("user", func(t *testing.T) {
		pool := New(t)
		if err := pool.QueryRow(t.Context(), "select current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	e, _ := get()
	var exists bool
	if err := e.admin.QueryRow(t.Context(), "select exists(select 1 from pg_database where datname = $1)", name).Scan(&exists); err != nil || exists {
		t.Errorf("database %s still exists after its test (%v)", name, err)
	}
}

// BenchmarkClone measures what NewURL adds to a test: one clone, and its drop at the end.
func BenchmarkClone(b *testing.B) {
	e, err := get() // the server and the template are set up outside the timing
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var cloning time.Duration
	for b.Loop() {
		began := time.Now()
		name, err := e.clone(ctx)
		if err != nil {
			b.Fatal(err)
		}
		cloning += time.Since(began)
		if err := e.drop(ctx, name); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cloning.Microseconds())/1000/float64(b.N), "ms/clone")
}
