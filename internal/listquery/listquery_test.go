package listquery

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var spec = Spec{
	Fields: map[string]Field{
		"name":     {Kind: String, Column: "t.name", Sortable: true},
		"gpus":     {Kind: Int, Column: "t.gpus", Sortable: true},
		"external": {Kind: Bool, Column: "t.external"},
		"created":  {Kind: Time, Column: "t.created_at", Sortable: true},
	},
	DefaultSort:  "name",
	TieBreak:     "t.id",
	SearchColumn: "t.name",
}

func TestParseFilterByAllOperators(t *testing.T) {
	got, err := ParseFilterBy("name==Job, name!=x,gpus<=8,gpus>=1,name=@or,name!@cron,name=^Py,name=$Job,external==true,created>=2026-01-02T03:04:05Z", spec)
	if err != nil {
		t.Fatal(err)
	}
	want := []Filter{
		{"name", Eq, "Job"}, {"name", NotEq, "x"}, {"gpus", LessEq, "8"}, {"gpus", GreaterEq, "1"},
		{"name", Contains, "or"}, {"name", NotContains, "cron"}, {"name", StartsWith, "Py"}, {"name", EndsWith, "Job"},
		{"external", Eq, "true"}, {"created", GreaterEq, "2026-01-02T03:04:05Z"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("filters (-want +got):\n%s", d)
	}
}

func TestParseFilterByValueMayHoldOperatorCharacters(t *testing.T) {
	got, err := ParseFilterBy("name==a==b", spec)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]Filter{{"name", Eq, "a==b"}}, got); d != "" {
		t.Error(d)
	}
}

func TestParseRejectsWithASentenceNamingTheProblem(t *testing.T) {
	cases := map[string]string{
		"filterBy=colour==red":       `"colour"`,
		"filterBy=name~x":            "operator",
		"filterBy===x":               "field name",
		"filterBy=gpus=@1":           "works on text",
		"filterBy=gpus==many":        "many",
		"filterBy=external>=true":    "== or !=",
		"filterBy=created==tomorrow": "RFC 3339",
		"sortBy=external":            "external",
		"sortOrder=sideways":         "sideways",
		"limit=0":                    "limit",
		"limit=abc":                  "limit",
		"offset=-5":                  "offset",
		"filterBy=gpus==99999999999": "from -2147483648 to 2147483647",
		"filterBy=gpus<=-2147483649": "from -2147483648 to 2147483647",
		"filterBy=name==a%00b":       "NUL",
		"filterBy=name=@%ff":         "UTF-8",
		"search=a%00b":               "NUL",
		"search=%C3%28":              "UTF-8",
	}
	for raw, mention := range cases {
		v, _ := url.ParseQuery(raw)
		_, err := Parse(v, spec)
		if err == nil || !IsError(err) {
			t.Errorf("%s: got %v, want a list parameter error", raw, err)
			continue
		}
		if !strings.Contains(err.Error(), mention) {
			t.Errorf("%s: %q does not mention %q", raw, err, mention)
		}
	}
}

func TestSQLUsesPlaceholdersAndAStableOrder(t *testing.T) {
	v, _ := url.ParseQuery("filterBy=name=$Job,gpus>=2&search=py&sortBy=gpus&sortOrder=desc&limit=10&offset=20")
	q, err := Parse(v, spec)
	if err != nil {
		t.Fatal(err)
	}
	var args Args
	where := q.Where(spec, &args)
	order := q.OrderBy(spec)
	page := q.Page(&args)
	wantWhere := "right(lower(t.name), length($1)) = lower($2) AND t.gpus >= $3 AND strpos(lower(t.name), lower($4)) > 0"
	if where != wantWhere {
		t.Errorf("where = %s", where)
	}
	if order != "t.gpus DESC NULLS LAST, t.id DESC" {
		t.Errorf("order = %s", order)
	}
	if page != "LIMIT $5 OFFSET $6" {
		t.Errorf("page = %s", page)
	}
	if d := cmp.Diff(Args{"Job", "Job", int64(2), "py", 11, 20}, args); d != "" {
		t.Errorf("args (-want +got):\n%s", d)
	}
}

func TestNextPage(t *testing.T) {
	q := Query{Offset: 10, Limit: 2}
	rows, next := Next(q, []int{1, 2, 3})
	if len(rows) != 2 || next == nil || *next != 12 {
		t.Errorf("got %v %v", rows, next)
	}
	rows, next = Next(q, []int{1, 2})
	if len(rows) != 2 || next != nil {
		t.Errorf("last page: got %v %v", rows, next)
	}
}

// FuzzParse checks that no input makes the parser panic, and that whatever it accepts names
// only known fields and turns into SQL whose only interpolations are whitelisted columns.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"name==Job", "gpus>=2,name=@a", "name==", "=@", ",,", "name=$", "created<=2026-01-01T00:00:00Z", "name==a,b",
		"name==a\x00b", "name=@\xff", "gpus==9223372036854775807", "gpus>=2147483648", "gpus<=-2147483648"} {
		f.Add(s, "name", "asc", "")
	}
	f.Add("", "name;drop", "asc", "a\x00")
	f.Add("", "name", "desc", "\xc3\x28")
	f.Fuzz(func(t *testing.T, filterBy, sortBy, sortOrder, search string) {
		v := url.Values{"filterBy": {filterBy}, "sortBy": {sortBy}, "sortOrder": {sortOrder}, "search": {search}}
		q, err := Parse(v, spec)
		if err != nil {
			if !IsError(err) {
				t.Fatalf("non-list error %v", err)
			}
			return
		}
		// Whatever reaches SQL is text PostgreSQL stores and numbers its integer columns hold.
		if !utf8.ValidString(q.Search) || strings.ContainsRune(q.Search, 0) {
			t.Fatalf("accepted search %q", q.Search)
		}
		for _, flt := range q.Filters {
			if _, ok := spec.Fields[flt.Field]; !ok {
				t.Fatalf("accepted unknown field %q", flt.Field)
			}
			if !utf8.ValidString(flt.Value) || strings.ContainsRune(flt.Value, 0) {
				t.Fatalf("accepted filter value %q", flt.Value)
			}
			if spec.Fields[flt.Field].Kind == Int {
				if n, err := strconv.ParseInt(flt.Value, 10, 64); err != nil || n < math.MinInt32 || n > math.MaxInt32 {
					t.Fatalf("accepted %q for an integer column", flt.Value)
				}
			}
		}
		// Values never shape the SQL text: the same filters with other values give the same SQL.
		var args, otherArgs Args
		where := q.Where(spec, &args)
		other := q
		other.Filters = nil
		for _, flt := range q.Filters {
			flt.Value = map[Kind]string{String: "x", Int: "1", Bool: "true", Time: "2026-01-01T00:00:00Z"}[spec.Fields[flt.Field].Kind]
			other.Filters = append(other.Filters, flt)
		}
		if where != other.Where(spec, &otherArgs) {
			t.Fatalf("filter values reached the SQL text: %s", where)
		}
	})
}

// Run:ai's clients may send filterBy once with terms joined by commas (its documented form)
// or once per term; both mean every term holds.
func TestParseFilterByRepeatedParameterKeepsEveryTerm(t *testing.T) {
	v, _ := url.ParseQuery("filterBy=name==a&filterBy=gpus>=2")
	q, err := Parse(v, spec)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]Filter{{"name", Eq, "a"}, {"gpus", GreaterEq, "2"}}, q.Filters); d != "" {
		t.Errorf("filters (-want +got):\n%s", d)
	}
}

// A field the list's peer API knows but this list cannot filter or sort by yet is refused
// with its own reason, not as an unknown name.
func TestParseRefusesAKnownButUnservedFieldWithItsReason(t *testing.T) {
	withUnserved := spec
	withUnserved.Unserved = map[string]string{"avgGpuUtilization24h": "GPU utilization is not measured"}
	for _, raw := range []string{"filterBy=avgGpuUtilization24h>=1", "sortBy=avgGpuUtilization24h"} {
		v, _ := url.ParseQuery(raw)
		_, err := Parse(v, withUnserved)
		if err == nil || !IsError(err) || !strings.Contains(err.Error(), "GPU utilization is not measured") || !strings.Contains(err.Error(), "avgGpuUtilization24h") {
			t.Errorf("%s: got %v, want a list parameter error naming the field and its reason", raw, err)
		}
	}
}
