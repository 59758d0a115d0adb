package web_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/views"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Tests decode the API's answers into the API's own types (the view models in ./views, the
// error envelope, the list envelopes) and compare whole values with cmp.Diff.

// apiError is the error envelope of docs/api.md "Errors".
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// listed is a list answer: the items under its key and the offset of the next page (nil on
// the last page).
type listed[T any] struct {
	Items []T
	Next  *int
}

// decode decodes an answer into T, refusing fields T does not have, so that a comparison of
// T also notices a field the API answers but the test does not know.
func decode[T any](t testing.TB, body []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("answer does not decode into %T: %v: %.500s", v, err, body)
	}
	return v
}

// decodeList decodes a list answer whose items are under key.
// listBeside are the lists answered twice, under a second key beside the first: the audit
// log's page in Arbiter's shape (entries) and in Run:ai's (logs), the node pools under
// Arbiter's key (nodePools) and Run:ai's (nodepools).
var listBeside = map[string]string{"entries": "logs", "nodePools": "nodepools"}

func decodeList[T any](t testing.TB, body []byte, key string) listed[T] {
	t.Helper()
	env := decode[map[string]json.RawMessage](t, body)
	raw, ok := env[key]
	if !ok {
		t.Fatalf("list answer has no %q: %.500s", key, body)
	}
	for k := range env {
		if k != key && k != "next" && k != listBeside[key] {
			t.Fatalf("list answer has an unexpected field %q: %.500s", k, body)
		}
	}
	var l listed[T]
	l.Items = decode[[]T](t, raw)
	if next, ok := env["next"]; ok {
		l.Next = decode[*int](t, next)
	}
	return l
}

// getAs GETs path as the admin, fails unless the answer is 200, and decodes it into T.
func getAs[T any](t *testing.T, srv *httptest.Server, path string) T {
	t.Helper()
	return decode[T](t, get(t, srv, path).body)
}

// getList GETs a list as the admin: its items under key and the next page's offset.
func getList[T any](t *testing.T, srv *httptest.Server, path, key string) listed[T] {
	t.Helper()
	return decodeList[T](t, get(t, srv, path).body, key)
}

// list GETs a list as the admin and returns its items under key.
func list[T any](t *testing.T, srv *httptest.Server, path, key string) []T {
	t.Helper()
	return getList[T](t, srv, path, key).Items
}

func get(t *testing.T, srv *httptest.Server, path string) response {
	t.Helper()
	r := do(t, srv, "GET", path, "", "")
	if r.status != 200 {
		t.Fatalf("GET %s = %d: %s", path, r.status, r.body)
	}
	return r
}

// send sends JSON as the admin and fails unless the status is want.
func send(t *testing.T, srv *httptest.Server, method, path, body string, want int) response {
	t.Helper()
	r := do(t, srv, method, path, "application/json", body)
	if r.status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, r.status, want, r.body)
	}
	return r
}

// sendAs sends JSON as the admin, fails unless the status is want, and decodes the answer into T.
func sendAs[T any](t *testing.T, srv *httptest.Server, method, path, body string, want int) T {
	t.Helper()
	return decode[T](t, send(t, srv, method, path, body, want).body)
}

// create POSTs body to path as the admin, fails unless the answer is 201, and returns the id
// of what it created.
func create(t *testing.T, srv *httptest.Server, path, body string) string {
	t.Helper()
	return idOf(t, send(t, srv, "POST", path, body, 201).body)
}

// idOf returns the id of the object an answer describes.
func idOf(t testing.TB, body []byte) string {
	t.Helper()
	var object struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &object); err != nil || object.ID == "" {
		t.Fatalf("the answer has no id: %v: %.500s", err, body)
	}
	return object.ID
}

// refusal decodes an error answer.
func (r response) refusal(t testing.TB) apiError {
	t.Helper()
	return decode[apiError](t, r.body)
}

// stamps ignores when a row was made and changed and by whom (the API key's generated name):
// a test cannot know them in advance.
var stamps = cmp.Options{
	cmpopts.IgnoreFields(views.NodePool{}, "CreatedAt", "CreatedBy", "UpdatedAt", "UpdatedBy"),
	cmpopts.IgnoreFields(views.Department{}, "CreatedAt", "CreatedBy", "UpdatedAt", "UpdatedBy"),
	cmpopts.IgnoreFields(views.Project{}, "CreatedAt", "CreatedBy", "UpdatedAt", "UpdatedBy"),
	cmpopts.IgnoreFields(views.WorkloadType{}, "CreatedAt", "CreatedBy", "UpdatedAt", "UpdatedBy"),
	cmpopts.IgnoreFields(views.Priority{}, "CreatedAt", "UpdatedAt"),
}

// asWritten compares times as the API writes them (RFC 3339 text), so that the zone counts
// as well as the instant.
var asWritten = cmp.Comparer(func(a, b time.Time) bool {
	return a.Format(time.RFC3339Nano) == b.Format(time.RFC3339Nano)
})

// namesOf joins the names of xs with commas, in order.
func namesOf[T any](xs []T, name func(T) string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return strings.Join(out, ",")
}

// named returns the item of xs with that name; the test fails when there is none.
func named[T any](t testing.TB, xs []T, name string, nameOf func(T) string) T {
	t.Helper()
	for _, x := range xs {
		if nameOf(x) == name {
			return x
		}
	}
	var zero T
	t.Fatalf("no %T named %q", zero, name)
	return zero
}

// arbiterPool is the Arbiter part of a node pool's answer, its node count in status.nodes as
// the pages have it.
func arbiterPool(a views.NodePoolAnswer) views.NodePool {
	p := a.NodePool
	p.Status = a.Status.NodePoolStatus
	p.Status.Nodes = a.Status.NodeCount
	return p
}

// arbiterPools is arbiterPool of each.
func arbiterPools(as []views.NodePoolAnswer) []views.NodePool {
	out := make([]views.NodePool, len(as))
	for i, a := range as {
		out[i] = arbiterPool(a)
	}
	return out
}
