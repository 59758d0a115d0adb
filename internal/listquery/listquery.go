// Package listquery parses the list parameters shared by every list of the API (filterBy,
// sortBy, sortOrder, offset, limit, search) and turns them into SQL against a whitelist of
// fields, so that a field a caller names is never spliced into SQL unchecked.
package listquery

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Op is a filter operator.
type Op string

// The operators of docs/api.md "Lists". Contains, starts-with and ends-with ignore case; the others are exact.
const (
	Eq          Op = "=="
	NotEq       Op = "!="
	LessEq      Op = "<="
	GreaterEq   Op = ">="
	Contains    Op = "=@"
	NotContains Op = "!@"
	StartsWith  Op = "=^"
	EndsWith    Op = "=$"
)

var ops = []Op{Eq, NotEq, LessEq, GreaterEq, Contains, NotContains, StartsWith, EndsWith}

// Kind is how a field's values compare. Int fields are integer columns: their values are
// whole numbers in PostgreSQL's integer range (int32).
type Kind int

const (
	String Kind = iota
	Int
	Bool
	Time
)

func (k Kind) String() string {
	switch k {
	case Int:
		return "a whole number"
	case Bool:
		return "true or false"
	case Time:
		return "an RFC 3339 time"
	default:
		return "text"
	}
}

// Field describes one field a list can be filtered or sorted by: its kind and the SQL
// expression that yields it.
type Field struct {
	Kind     Kind
	Column   string // SQL expression, e.g. "t.name"
	Sortable bool
	Nullable bool
}

// Spec is what one list accepts.
type Spec struct {
	Fields      map[string]Field
	DefaultSort string // field name
	// TieBreak is an SQL expression appended to every ORDER BY so the order is stable across
	// refreshes and pages (usually the primary key).
	TieBreak string
	// SearchColumn is the SQL expression "search" matches against (the name), case-insensitively.
	SearchColumn string
	Paged        bool
	// Unserved are fields a peer API (Run:ai's) lets clients filter or sort this list by that
	// Arbiter cannot yet, each with why: a client naming one is told that, not that the name
	// is unknown.
	Unserved map[string]string
}

// Filter is one parsed "field<op>value" term.
type Filter struct {
	Field string
	Op    Op
	Value string
}

// Query is a parsed list request.
type Query struct {
	Filters []Filter
	SortBy  string
	Desc    bool
	Search  string
	Offset  int
	Limit   int
}

// Limits of paging (docs/api.md "Lists").
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Error is a bad list parameter; its message is meant for the caller.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

func errorf(format string, args ...any) error { return &Error{Message: fmt.Sprintf(format, args...)} }

// IsError reports whether err is a bad list parameter.
func IsError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Parse reads the list parameters from a request's query string.
func Parse(v url.Values, spec Spec) (Query, error) {
	q := Query{SortBy: spec.DefaultSort, Limit: DefaultLimit}
	var err error
	// Run:ai documents filterBy as one parameter of comma-joined terms; a client that repeats
	// the parameter means every term too.
	if q.Filters, err = ParseFilterBy(strings.Join(v["filterBy"], ","), spec); err != nil {
		return q, err
	}
	if s := v.Get("sortBy"); s != "" {
		f, ok := spec.Fields[s]
		if why, unserved := spec.Unserved[s]; unserved && !ok {
			return q, errorf("sortBy %q is not available here yet: %s; use one of: %s", s, why, strings.Join(spec.sortable(), ", "))
		}
		if !ok || !f.Sortable {
			return q, errorf("sortBy %q is not a field this list sorts by; use one of: %s", s, strings.Join(spec.sortable(), ", "))
		}
		q.SortBy = s
	}
	switch o := v.Get("sortOrder"); o {
	case "", "asc":
	case "desc":
		q.Desc = true
	default:
		return q, errorf("sortOrder %q is not valid; use asc or desc", o)
	}
	q.Search = v.Get("search")
	if err := checkText("search", q.Search); err != nil {
		return q, err
	}
	if s := v.Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return q, errorf("offset %q must be a whole number ≥ 0", s)
		}
		q.Offset = n
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return q, errorf("limit %q must be a whole number from 1 to %d", s, MaxLimit)
		}
		q.Limit = n
	}
	return q, nil
}

func (s Spec) sortable() []string {
	var names []string
	for name, f := range s.Fields {
		if f.Sortable {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func (s Spec) fieldNames() []string {
	names := make([]string, 0, len(s.Fields))
	for name := range s.Fields {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// ParseFilterBy parses "field<op>value,field<op>value". A term is a field name (letters,
// digits, '_' and '.') directly followed by an operator; the rest of the term is the value,
// so values may contain operator characters but not commas.
func ParseFilterBy(s string, spec Spec) ([]Filter, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if err := checkText("filterBy", s); err != nil {
		return nil, err
	}
	var filters []Filter
	for term := range strings.SplitSeq(s, ",") {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}
		i := 0
		for i < len(term) && isFieldChar(term[i]) {
			i++
		}
		field := term[:i]
		if field == "" {
			return nil, errorf("filterBy term %q does not start with a field name", term)
		}
		rest := term[i:]
		var op Op
		for _, o := range ops {
			if strings.HasPrefix(rest, string(o)) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, errorf("filterBy term %q has no valid operator after %q; use one of == != <= >= =@ !@ =^ =$", term, field)
		}
		f, ok := spec.Fields[field]
		if why, unserved := spec.Unserved[field]; unserved && !ok {
			return nil, errorf("filterBy field %q is not available here yet: %s; use one of: %s", field, why, strings.Join(spec.fieldNames(), ", "))
		}
		if !ok {
			return nil, errorf("filterBy field %q is not known here; use one of: %s", field, strings.Join(spec.fieldNames(), ", "))
		}
		value := rest[len(op):]
		if err := checkValue(field, f.Kind, op, value); err != nil {
			return nil, err
		}
		filters = append(filters, Filter{Field: field, Op: op, Value: value})
	}
	return filters, nil
}

// checkText refuses what PostgreSQL cannot compare with text: NUL and bytes that are not UTF-8.
func checkText(param, s string) error {
	if !utf8.ValidString(s) {
		return errorf("%s is not valid UTF-8 text; send text encoded in UTF-8", param)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return errorf("%s holds a NUL character, which no stored text contains; remove it", param)
	}
	return nil
}

func isFieldChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

func checkValue(field string, kind Kind, op Op, value string) error {
	textOp := op == Contains || op == NotContains || op == StartsWith || op == EndsWith
	if textOp && kind != String {
		return errorf("filterBy operator %s works on text; field %q is %s", op, field, kind)
	}
	var err error
	switch kind {
	case Int:
		if _, err = strconv.ParseInt(value, 10, 32); err != nil {
			return errorf("filterBy value %q for field %q must be a whole number from %d to %d", value, field, math.MinInt32, math.MaxInt32)
		}
	case Bool:
		_, err = strconv.ParseBool(value)
		if err == nil && op != Eq && op != NotEq {
			return errorf("filterBy field %q is true or false; compare it with == or !=", field)
		}
	case Time:
		_, err = time.Parse(time.RFC3339, value)
	}
	if err != nil {
		return errorf("filterBy value %q for field %q must be %s", value, field, kind)
	}
	return nil
}

// Args accumulates positional SQL arguments.
type Args []any

// Add appends v and returns its placeholder ($n).
func (a *Args) Add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// Where returns the SQL conditions (joined with AND, without the WHERE keyword; "TRUE" when
// there are none) for the query's filters and search.
func (q Query) Where(spec Spec, args *Args) string {
	var conds []string
	for _, f := range q.Filters {
		field := spec.Fields[f.Field]
		conds = append(conds, condition(field, f.Op, f.Value, args))
	}
	if q.Search != "" && spec.SearchColumn != "" {
		conds = append(conds, fmt.Sprintf("strpos(lower(%s), lower(%s)) > 0", spec.SearchColumn, args.Add(q.Search)))
	}
	if len(conds) == 0 {
		return "TRUE"
	}
	return strings.Join(conds, " AND ")
}

func condition(f Field, op Op, value string, args *Args) string {
	col := f.Column
	var v any = value
	switch f.Kind {
	case Int:
		n, _ := strconv.ParseInt(value, 10, 64)
		v = n
	case Bool:
		b, _ := strconv.ParseBool(value)
		v = b
	case Time:
		t, _ := time.Parse(time.RFC3339, value)
		v = t
	}
	switch op {
	case Eq:
		return fmt.Sprintf("%s = %s", col, args.Add(v))
	case NotEq:
		return fmt.Sprintf("%s IS DISTINCT FROM %s", col, args.Add(v))
	case LessEq:
		return fmt.Sprintf("%s <= %s", col, args.Add(v))
	case GreaterEq:
		return fmt.Sprintf("%s >= %s", col, args.Add(v))
	case Contains:
		return fmt.Sprintf("strpos(lower(%s), lower(%s)) > 0", col, args.Add(v))
	case NotContains:
		return fmt.Sprintf("strpos(lower(coalesce(%s, '')), lower(%s)) = 0", col, args.Add(v))
	case StartsWith:
		return fmt.Sprintf("starts_with(lower(%s), lower(%s))", col, args.Add(v))
	case EndsWith:
		return fmt.Sprintf("right(lower(%s), length(%s)) = lower(%s)", col, args.Add(v), args.Add(v))
	}
	panic("listquery: unknown operator " + string(op))
}

// Holds is condition's meaning over text held in memory (a list that is not in the database,
// such as the last cycle's nodes): contains, not-contains, starts-with and ends-with ignore
// case; the others compare exactly.
func (f Filter) Holds(v string) bool {
	lv, lw := strings.ToLower(v), strings.ToLower(f.Value)
	switch f.Op {
	case Eq:
		return v == f.Value
	case NotEq:
		return v != f.Value
	case LessEq:
		return v <= f.Value
	case GreaterEq:
		return v >= f.Value
	case Contains:
		return strings.Contains(lv, lw)
	case NotContains:
		return !strings.Contains(lv, lw)
	case StartsWith:
		return strings.HasPrefix(lv, lw)
	case EndsWith:
		return strings.HasSuffix(lv, lw)
	}
	panic("listquery: unknown operator " + string(f.Op))
}

// OrderBy returns the ORDER BY expression (without the keywords), always ending in the
// spec's tie-break so the order is total.
func (q Query) OrderBy(spec Spec) string {
	dir := "ASC"
	if q.Desc {
		dir = "DESC"
	}
	parts := []string{}
	if f, ok := spec.Fields[q.SortBy]; ok {
		parts = append(parts, fmt.Sprintf("%s %s NULLS LAST", f.Column, dir))
	}
	if spec.TieBreak != "" {
		parts = append(parts, spec.TieBreak+" "+dir)
	}
	return strings.Join(parts, ", ")
}

// Page returns the LIMIT/OFFSET clause; it asks for one row more than the page so the caller
// can tell whether a next page exists (see Next).
func (q Query) Page(args *Args) string {
	return fmt.Sprintf("LIMIT %s OFFSET %s", args.Add(q.Limit+1), args.Add(q.Offset))
}

// Next trims the extra row fetched by Page and returns the next page's offset, or nil.
func Next[T any](q Query, rows []T) ([]T, *int) {
	if len(rows) <= q.Limit {
		return rows, nil
	}
	next := q.Offset + q.Limit
	return rows[:q.Limit], &next
}
