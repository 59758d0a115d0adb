package migrations_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/migrations"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// schemaQueries describe Arbiter's schema (PostgreSQL's public schema) from the catalogue, one
// sorted list of rows per kind of object, each row as PostgreSQL itself spells the object.
var schemaQueries = map[string]string{
	"relations": `select c.relname || ' ' || c.relkind::text from pg_class c where c.relnamespace = 'public'::regnamespace`,
	"columns": `select table_name || '.' || column_name || ' #' || ordinal_position || ' ' || data_type ||
		coalesce('(' || character_maximum_length || ')', '') || ' nullable=' || is_nullable ||
		' default=' || coalesce(column_default, '') || ' identity=' || is_identity ||
		' generated=' || coalesce(generation_expression, '')
		from information_schema.columns where table_schema = 'public'`,
	"constraints": `select conrelid::regclass::text || ' ' || conname || ': ' || pg_get_constraintdef(oid)
		from pg_constraint where connamespace = 'public'::regnamespace`,
	"indexes":   `select indexdef from pg_indexes where schemaname = 'public'`,
	"functions": `select pg_get_functiondef(p.oid) from pg_proc p where p.pronamespace = 'public'::regnamespace`,
	"triggers": `select pg_get_triggerdef(t.oid) from pg_trigger t join pg_class c on c.oid = t.tgrelid
		where c.relnamespace = 'public'::regnamespace and not t.tgisinternal`,
	"types": `select t.typname || ' ' || t.typtype::text || coalesce(' ' || (select string_agg(e.enumlabel, ',' order by e.enumsortorder)
		from pg_enum e where e.enumtypid = t.oid), '') from pg_type t where t.typnamespace = 'public'::regnamespace
		and (t.typtype in ('e', 'd', 'r', 'm') or t.typtype = 'c' and (select relkind from pg_class where oid = t.typrelid) = 'c')`,
}

// schemaOf reads the schema of the database at dbURL.
func schemaOf(t *testing.T, dbURL string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	out := map[string][]string{}
	for kind, query := range schemaQueries {
		rows, err := conn.Query(ctx, query)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		list, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		slices.Sort(list)
		out[kind] = list
	}
	return out
}

// withoutBookkeeping drops golang-migrate's own table (schema_migrations, which stays after the
// last down), leaving what Arbiter's migrations made.
func withoutBookkeeping(schema map[string][]string) map[string][]string {
	out := map[string][]string{}
	for kind, rows := range schema {
		for _, row := range rows {
			if !strings.Contains(row, "schema_migrations") {
				out[kind] = append(out[kind], row)
			}
		}
	}
	return out
}

// TestUpDownUp_DownLeavesNothingAndUpRebuildsTheSameSchema: every migration's down undoes its
// up (no Arbiter table, index, constraint, function, trigger or type is left behind), and
// migrating up again yields exactly the schema the first up made.
func TestUpDownUp_DownLeavesNothingAndUpRebuildsTheSameSchema(t *testing.T) {
	t.Parallel()
	dbURL := testdb.NewURL(t) // a database migrated up from empty
	first := schemaOf(t, dbURL)
	if len(withoutBookkeeping(first)["relations"]) == 0 {
		t.Fatalf("the first up made no tables: %v", first)
	}

	if err := migrations.Down(dbURL); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string][]string{}, withoutBookkeeping(schemaOf(t, dbURL))); d != "" {
		t.Errorf("down left Arbiter's objects behind (-want +got):\n%s", d)
	}
	if _, _, applied, err := migrations.Version(dbURL); err != nil || applied {
		t.Errorf("after down: applied = %v (%v), want no version", applied, err)
	}

	if err := migrations.Up(dbURL); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(first, schemaOf(t, dbURL)); d != "" {
		t.Errorf("the second up made another schema than the first (-first +second):\n%s", d)
	}
	if version, dirty, applied, err := migrations.Version(dbURL); err != nil || !applied || dirty || version != migrations.Latest() {
		t.Errorf("after the second up: version %d, dirty %v, applied %v (%v); want %d, clean", version, dirty, applied, err, migrations.Latest())
	}
}
