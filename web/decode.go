package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// maxBody is the largest request body accepted (docs/api.md "Errors": 413 over 1 MiB).
const maxBody = 1 << 20

// decodeJSON reads a JSON object into dst: Content-Type must be JSON (415), the body must
// parse (400), name only fields of dst, each once and spelled as dst spells it (400 naming the
// unknown one and the accepted ones), give each the right type and a value in its range (400
// naming it; see checkJSON), and hold one value.
func decodeJSON(c echo.Context, dst any, accepted ...string) error {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return &httpError{status: http.StatusUnsupportedMediaType, message: "send the body as JSON with the header Content-Type: application/json"}
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return badRequest("the request body is empty; send a JSON object")
	}
	if trimmed[0] != '{' {
		if json.Valid(trimmed) {
			return badRequest("the request body must be a JSON object")
		}
		return badRequest("the request body is not valid JSON")
	}
	if err := checkJSON(body, reflect.TypeOf(dst)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return describeJSONError(err, accepted)
	}
	if dec.More() {
		return badRequest("the request body holds more than one JSON value; send exactly one object")
	}
	return nil
}

// readBody reads the request body up to maxBody (413 over it).
func readBody(c echo.Context) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, echo.ErrStatusRequestEntityTooLarge
		}
		return nil, badRequest("the request body could not be read")
	}
	return body, nil
}

func describeJSONError(err error, accepted []string) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var field *fieldError
	var parseTime *time.ParseError
	switch {
	case errors.As(err, &field):
		return badRequest("%s", field.Error())
	case errors.As(err, &syntax):
		return badRequest("the request body is not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest("the request body must be a JSON object")
		}
		want, got := describeGoType(typ.Type), describeJSONValue(typ.Value)
		if want == got { // the right kind of value, but not one this field takes
			return badRequest("%s: %s is not a value it takes", typ.Field, typ.Value)
		}
		return badRequest("%s must be %s, not %s", typ.Field, want, got)
	case errors.As(err, &parseTime):
		return badRequest("a time must be written in RFC 3339, such as 2026-01-31T09:00:00Z, not %q", parseTime.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		sorted := slices.Clone(accepted)
		slices.Sort(sorted)
		return badRequest("unknown field %s; this request accepts: %s", name, strings.Join(sorted, ", "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("the request body is cut short; send a complete JSON object")
	}
	return badRequest("the request body is not valid JSON")
}

// describeGoType says which JSON value a Go type takes, in the words describeJSONValue uses.
func describeGoType(t reflect.Type) string {
	if t = shape(t); t == nil {
		return "a value"
	}
	switch t {
	case reflect.TypeFor[uuid.UUID]():
		return "a string"
	case timeType:
		return "a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// describeJSONValue names the kind of an UnmarshalTypeError's Value ("string", "number 1.5",
// "array", "object", "bool").
func describeJSONValue(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	return "a " + v
}

// fieldError is a value of the right JSON type that is still wrong (a malformed UUID).
type fieldError struct{ msg string }

func (e *fieldError) Error() string { return e.msg }

// optional is a request field that may be absent (Set false), null (Set, Null) or a value.
type optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// storeOptionalID turns an optional id field into the store's form, validating the UUID.
func storeOptionalID(field string, o optional[string]) (store.Optional[uuid.UUID], error) {
	if !o.Set {
		return store.Optional[uuid.UUID]{}, nil
	}
	if o.Null {
		return store.Optional[uuid.UUID]{Set: true}, nil
	}
	id, err := uuid.Parse(o.Value)
	if err != nil {
		return store.Optional[uuid.UUID]{}, badField(field, "%s %q is not a valid id; ids are UUIDs such as 6723b9d7-73d1-5e4c-a494-d8fdeddc541c", field, o.Value)
	}
	return store.Optional[uuid.UUID]{Set: true, Value: &id}, nil
}

// storeOptionalValue turns an optional field into the store's form.
func storeOptionalValue[T any](o optional[T]) store.Optional[T] {
	if !o.Set || o.Null {
		return store.Optional[T]{Set: o.Set}
	}
	v := o.Value
	return store.Optional[T]{Set: true, Value: &v}
}

// pathID parses a UUID path parameter; a malformed one is a 400 that says so.
func pathID(c echo.Context, name string) (uuid.UUID, error) {
	raw := c.Param(name)
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return uuid.Nil, badRequest("%q is not a valid id; ids are UUIDs such as 6723b9d7-73d1-5e4c-a494-d8fdeddc541c", raw)
	}
	return id, nil
}
