package migrations_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
)

// TestAccessRulesAreNumberedInTheOrderTheyWereMade: the rules there are when access rules get
// their integer number are numbered 1, 2, … in the order they were made, a rule made later
// takes the next number, and neither the rule nor its number can be given one by hand; down
// and up again number them afresh.
func TestAccessRulesAreNumberedInTheOrderTheyWereMade(t *testing.T) {
	t.Parallel()
	s := newSchemaAt(t, 15)
	m, ctx, conn := s.m, s.ctx, s.conn
	exec := func(sql string, args ...any) error {
		_, err := conn.Exec(ctx, sql, args...)
		return err
	}
	day := func(d int) time.Time { return time.Date(2026, 1, d, 9, 0, 0, 0, time.UTC) }
	if err := exec(`INSERT INTO access_rules (subject_type, subject, role, scope_type, created_at) VALUES
		('user', 'carol', 'viewer', 'system', $3),
		('user', 'alice', 'admin', 'system', $1),
		('group', 'ml-team', 'researcher', 'system', $2)`, day(1), day(2), day(3)); err != nil {
		t.Fatal(err)
	}
	numbers := func() map[string]int32 {
		t.Helper()
		rows, err := conn.Query(ctx, `SELECT subject, number FROM access_rules`)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct {
			subject string
			number  int32
		}, error) {
			var v struct {
				subject string
				number  int32
			}
			return v, r.Scan(&v.subject, &v.number)
		})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int32{}
		for _, v := range got {
			out[v.subject] = v.number
		}
		return out
	}

	if err := m.Migrate(16); err != nil {
		t.Fatal(err)
	}
	if err := exec(`INSERT INTO access_rules (subject_type, subject, role, scope_type) VALUES ('user', 'dave', 'viewer', 'system')`); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]int32{"alice": 1, "ml-team": 2, "carol": 3, "dave": 4}, numbers()); d != "" {
		t.Errorf("access rule numbers (-want +got):\n%s", d)
	}
	if err := exec(`INSERT INTO access_rules (subject_type, subject, role, scope_type, number) VALUES ('user', 'eve', 'viewer', 'system', 9)`); err == nil {
		t.Error("a rule was given a number by hand")
	}
	if err := exec(`UPDATE access_rules SET number = 7 WHERE subject = 'dave'`); err == nil {
		t.Error("a rule's number was changed")
	}

	if err := m.Migrate(15); err != nil {
		t.Fatal(err)
	}
	if err := m.Migrate(16); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]int32{"alice": 1, "ml-team": 2, "carol": 3, "dave": 4}, numbers()); d != "" {
		t.Errorf("access rule numbers after down and up (-want +got):\n%s", d)
	}
}
