package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// checkJSON walks a request body token by token against the Go type it decodes into and
// refuses, naming the field, what encoding/json would let through or turn into a 500 further
// on: a key given twice in one object (encoding/json keeps the last), a key that matches a
// field only when case is ignored (encoding/json matches case-insensitively), a string holding
// NUL or bytes that are not UTF-8 (PostgreSQL stores neither; encoding/json would turn the
// bytes into U+FFFD), a string over maxText bytes, a number where a whole number within the
// field's range is wanted (its `range:"lo,hi"` tag; the int32 range of an integer column by
// default), and a time that is not RFC 3339. Syntax errors are left to the decoder, which
// reports them with their offset.
func checkJSON(body []byte, t reflect.Type) error {
	w := jsonWalker{body: body, dec: json.NewDecoder(bytes.NewReader(body))}
	w.dec.UseNumber()
	err := w.value(t, "", nil, 0)
	if _, ok := err.(errStop); ok {
		return nil
	}
	return err
}

// errStop ends the walk at a syntax error: the decoder reports it better.
type errStop struct{}

func (errStop) Error() string { return "stop" }

type jsonWalker struct {
	body []byte
	dec  *json.Decoder
}

// intRange is the whole numbers a field accepts.
type intRange struct{ lo, hi int64 }

var int32Range = intRange{math.MinInt32, math.MaxInt32}

// jsonValued is a wrapper type (optional[T]) that decodes as its value.
type jsonValued interface{ jsonValueType() reflect.Type }

func (optional[T]) jsonValueType() reflect.Type { return reflect.TypeFor[T]() }

var (
	timeType       = reflect.TypeFor[time.Time]()
	jsonValuedType = reflect.TypeFor[jsonValued]()
)

// shape unwraps pointers and optional[T] to the type whose JSON form the value has.
func shape(t reflect.Type) reflect.Type {
	for t != nil {
		switch {
		case t.Kind() == reflect.Pointer:
			t = t.Elem()
		case t.Implements(jsonValuedType):
			t = reflect.Zero(t).Interface().(jsonValued).jsonValueType()
		default:
			return t
		}
	}
	return nil
}

func fieldName(path string) string {
	if path == "" {
		return "the request body"
	}
	return path
}

// token reads the next token and the raw bytes it came from (with any separator before it).
func (w *jsonWalker) token() (json.Token, []byte, error) {
	start := w.dec.InputOffset()
	tok, err := w.dec.Token()
	if err != nil {
		return nil, nil, errStop{}
	}
	return tok, w.body[start:w.dec.InputOffset()], nil
}

// maxJSONDepth bounds how deeply a body nests; no request type nests more than a few levels,
// and json.Decoder.Token slows down with depth.
const maxJSONDepth = 32

func (w *jsonWalker) value(t reflect.Type, path string, rng *intRange, depth int) error {
	tok, raw, err := w.token()
	if err != nil {
		return err
	}
	t = shape(t)
	if want, got := describeGoType(t), describeToken(tok); t != nil && t.Kind() != reflect.Interface && tok != nil && want != got {
		if t == timeType {
			want = "an RFC 3339 time such as \"2026-01-31T09:00:00Z\""
		}
		return badField(path, "%s must be %s, not %s", fieldName(path), want, got)
	}
	switch v := tok.(type) {
	case json.Delim:
		if depth >= maxJSONDepth {
			return badRequest("the request body nests objects and arrays more than %d deep", maxJSONDepth)
		}
		if v == '{' {
			return w.object(t, path, depth+1)
		}
		return w.array(t, path, depth+1)
	case string:
		if err := checkText(fieldName(path), v, raw); err != nil {
			return err
		}
		if t == timeType {
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				return badField(path, "%s must be an RFC 3339 time such as 2026-01-31T09:00:00Z, not %q", fieldName(path), v)
			}
		}
	case json.Number:
		if t == nil {
			return nil
		}
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			r := int32Range
			if rng != nil {
				r = *rng
			}
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || n < r.lo || n > r.hi {
				return badField(path, "%s must be a whole number from %d to %d, not %s", fieldName(path), r.lo, r.hi, v)
			}
		}
	}
	return nil
}

// describeToken names a token's kind in describeGoType's words.
func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "true or false"
	}
	return "null"
}

// object walks an object's members; t is a struct, a map or nil (anything goes).
func (w *jsonWalker) object(t reflect.Type, path string, depth int) error {
	fields := jsonFields(t)
	seen := map[string]bool{}
	for w.dec.More() {
		tok, raw, err := w.token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		sub := key
		if path != "" {
			sub = path + "." + key
		}
		if err := checkText("a field name in "+fieldName(path), key, raw); err != nil {
			return err
		}
		if seen[key] {
			return badRequest("field %q appears more than once; give each field once", sub)
		}
		seen[key] = true
		var ft reflect.Type
		var rng *intRange
		switch {
		case fields != nil:
			f, ok := fields[key]
			if !ok {
				for name := range fields {
					if strings.EqualFold(name, key) {
						return badRequest("unknown field %q; field names are case-sensitive: did you mean %q?", sub, name)
					}
				}
			}
			ft, rng = f.typ, f.rng
		case t != nil && t.Kind() == reflect.Map:
			ft = t.Elem()
		}
		if err := w.value(ft, sub, rng, depth); err != nil {
			return err
		}
	}
	_, _, err := w.token() // '}'
	return err
}

func (w *jsonWalker) array(t reflect.Type, path string, depth int) error {
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	for i := 0; w.dec.More(); i++ {
		if err := w.value(elem, fmt.Sprintf("%s[%d]", path, i), nil, depth); err != nil {
			return err
		}
	}
	_, _, err := w.token() // ']'
	return err
}

type jsonField struct {
	typ reflect.Type
	rng *intRange
}

// jsonFields maps a struct's JSON names to their types (embedded structs' fields promoted, as
// encoding/json does); nil when t is not a struct with JSON fields.
func jsonFields(t reflect.Type) map[string]jsonField {
	if t == nil || t.Kind() != reflect.Struct || t == timeType {
		return nil
	}
	out := map[string]jsonField{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || (f.Anonymous && f.Tag.Get("json") == "") {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		jf := jsonField{typ: f.Type}
		if r := f.Tag.Get("range"); r != "" {
			lo, hi, _ := strings.Cut(r, ",")
			l, err1 := strconv.ParseInt(lo, 10, 64)
			h, err2 := strconv.ParseInt(hi, 10, 64)
			if err1 != nil || err2 != nil {
				panic("web: bad range tag on " + t.String() + "." + f.Name)
			}
			jf.rng = &intRange{l, h}
		}
		out[name] = jf
	}
	return out
}

// maxText is the most bytes any one text value of a request may hold (a query parameter, a
// form field, a JSON string); fields stored in indexed columns have lower limits of their own.
const maxText = 16 << 10

// checkText refuses text PostgreSQL cannot store (NUL, bytes that are not UTF-8) and text over
// maxText bytes, naming what holds it. raw is the text as sent (it may include JSON escapes and
// separators) and is what is checked for UTF-8.
func checkText(what, s string, raw []byte) error {
	switch {
	case !utf8.Valid(raw):
		return badRequest("%s is not valid UTF-8 text; send text encoded in UTF-8", what)
	case strings.IndexByte(s, 0) >= 0:
		return badRequest("%s holds a NUL character (\\u0000), which no field accepts; remove it", what)
	case len(s) > maxText:
		return badRequest("%s is %d bytes long; the limit is %d", what, len(s), maxText)
	}
	return nil
}
