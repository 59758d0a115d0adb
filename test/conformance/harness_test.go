package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/arbiterhq/arbiter/internal/testkit/servetest"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/server"
)

func TestMain(m *testing.M) { testdb.Main(m, stopSharedCluster) }

const (
	adminPassword = "conformance-admin-password"
)

// loadExtract is the committed extract as kin-openapi reads it. The document as published
// does not pass a strict check of its own examples, and its patterns use a regular-expression
// syntax Go lacks: those two checks are off, the rest (types, required fields, enums, status
// codes) is on.
func loadExtract(t *testing.T) *openapi3.T {
	t.Helper()
	raw, err := os.ReadFile(extractPath)
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("loading %s: %v", extractPath, err)
	}
	if err := doc.Validate(context.Background(), openapi3.DisableExamplesValidation(), openapi3.DisableSchemaPatternValidation()); err != nil {
		t.Fatalf("%s is not a valid OpenAPI document: %v", extractPath, err)
	}
	return doc
}

var validation = &openapi3filter.Options{
	AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	IncludeResponseStatus: true,
	MultiError:            true,
	SchemaValidationOptions: []openapi3.SchemaValidationOption{
		openapi3.DisablePatternValidation(), openapi3.MultiErrors(),
	},
}

// client calls a real Arbiter and validates each exchange against the extract.
type client struct {
	base, token string
	doc         *openapi3.T
}

// serve runs server.Serve over a fresh database, without a cluster, and signs the admin in.
func serve(t *testing.T) *client {
	t.Helper()
	cfg, err := server.ParseConfig("serve", []string{"--database-url", testdb.NewURL(t)}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.DataDir, cfg.Kubeconfig, cfg.AdminPassword = "127.0.0.1:0", t.TempDir(), server.NoCluster, adminPassword
	c := &client{base: servetest.Serve(t, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))), doc: loadExtract(t)}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	c.form(t, "/api/v2/token", url.Values{"grant_type": {"password"}, "username": {"admin"}, "password": {adminPassword}}, 200, &tok)
	c.token = tok.AccessToken
	return c
}

// exchange is one call: the document's path template, the values of its parameters, the query
// and the body.
type exchange struct {
	method, route string            // "GET", "/api/v1/node-pools/{nodepoolId}"
	params        map[string]string // path parameters by the document's names
	query         url.Values
	body          any // JSON, or url.Values for a form
	want          int // the status expected
	out           any // where a 2xx answer is decoded; nil: not decoded
}

func (x exchange) url(base string) string {
	p := x.route
	for k, v := range x.params {
		p = strings.ReplaceAll(p, "{"+k+"}", url.PathEscape(v))
	}
	if len(x.query) > 0 {
		p += "?" + x.query.Encode()
	}
	return base + p
}

// do sends x, checks that the request is one the document describes, that the status is x.want,
// and that the status and body validate against the document; it reports each failure under
// the operation's name and returns the body.
func (c *client) do(t *testing.T, x exchange) []byte {
	t.Helper()
	item := c.doc.Paths.Find(x.route)
	if item == nil {
		t.Fatalf("%s %s is not in the extract", x.method, x.route)
	}
	op := item.GetOperation(x.method)
	if op == nil {
		t.Fatalf("%s %s is not in the extract", x.method, x.route)
	}
	var body []byte
	contentType := ""
	switch b := x.body.(type) {
	case nil:
	case url.Values:
		body, contentType = []byte(b.Encode()), "application/x-www-form-urlencoded"
	case json.RawMessage:
		body, contentType = b, "application/json"
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
		contentType = "application/json"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	newRequest := func() *http.Request {
		req, err := http.NewRequestWithContext(ctx, x.method, x.url(c.base), bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		return req
	}
	input := &openapi3filter.RequestValidationInput{Request: newRequest(), PathParams: x.params, Options: validation,
		Route: &routers.Route{Spec: c.doc, Path: x.route, PathItem: item, Method: x.method, Operation: op}}
	if err := openapi3filter.ValidateRequest(ctx, input); err != nil {
		t.Fatalf("%s (%s %s): the test's own request is not one the document describes:\n%s", op.OperationID, x.method, x.route, strings.Join(reasons(err), "\n"))
	}
	res, err := http.DefaultClient.Do(newRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != x.want {
		t.Errorf("%s (%s %s) answered %d, want %d: %s", op.OperationID, x.method, x.url(""), res.StatusCode, x.want, got)
		return got
	}
	in := &openapi3filter.ResponseValidationInput{RequestValidationInput: input, Status: res.StatusCode, Header: res.Header, Options: validation}
	in.SetBodyBytes(got)
	if err := openapi3filter.ValidateResponse(ctx, in); err != nil && len(unexplained(x.method+" "+x.route, reasons(err), got)) > 0 {
		t.Errorf("%s (%s %s): the answer does not validate against Run:ai's schema:\n%s\nanswer: %s", op.OperationID, x.method, x.url(""), strings.Join(unexplained(x.method+" "+x.route, reasons(err), got), "\n"), clip(got))
	}
	if x.out != nil && res.StatusCode/100 == 2 {
		if err := json.Unmarshal(got, x.out); err != nil {
			t.Errorf("%s: %v in %s", op.OperationID, err, clip(got))
		}
	}
	return got
}

// form posts a form outside validation (the admin's sign-in) and decodes a 2xx answer.
func (c *client) form(t *testing.T, path string, v url.Values, want int, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", c.base+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("POST %s answered %d, want %d: %s", path, res.StatusCode, want, got)
	}
	if err := json.Unmarshal(got, out); err != nil {
		t.Fatal(err)
	}
}

// arbiter calls one of Arbiter's own routes (not in the document) as the admin.
func (c *client) arbiter(t *testing.T, method, path string, body any, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		t.Fatalf("%s %s answered %d: %s", method, path, res.StatusCode, got)
	}
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			t.Fatal(err)
		}
	}
}

// example is the document's named example of a request body for method and route.
func (c *client) example(t *testing.T, method, route, name string) map[string]any {
	t.Helper()
	op := c.doc.Paths.Find(route).GetOperation(method)
	for _, mt := range op.RequestBody.Value.Content {
		if ex, ok := mt.Examples[name]; ok {
			v, _ := ex.Value.Value.(map[string]any)
			out := map[string]any{}
			for k, e := range v {
				out[k] = e
			}
			return out
		}
	}
	t.Fatalf("the document has no example %q for %s %s", name, method, route)
	return nil
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// reasons are kin-openapi's findings in err, one line each with where in the body they are:
// its own Error() repeats the whole schema.
func reasons(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		var multi openapi3.MultiError
		var schema *openapi3.SchemaError
		var response *openapi3filter.ResponseError
		var request *openapi3filter.RequestError
		switch {
		case errors.As(err, &multi):
			for _, e := range multi {
				walk(e)
			}
		case errors.As(err, &schema):
			out = append(out, "  /"+strings.Join(schema.JSONPointer(), "/")+": "+schema.Reason)
		case errors.As(err, &response) && response.Err != nil:
			walk(response.Err)
		case errors.As(err, &request) && request.Err != nil:
			out = append(out, "  "+request.Reason)
			walk(request.Err)
		default:
			out = append(out, "  "+err.Error())
		}
	}
	walk(err)
	return out
}

// deliberatelyDifferent are the findings Arbiter answers on purpose, by route, each with why
// (docs/api.md "Conformance" says the same).
var deliberatelyDifferent = map[string][]difference{}

// difference is a finding (one line of reasons: a JSON pointer and kin-openapi's reason)
// Arbiter answers on purpose, where of is true of the object holding the field, and why.
type difference struct {
	finding *regexp.Regexp
	of      func(holder map[string]any) bool
	why     string
}

func init() {
	// The specification gives a workload type no category (SPOTRequest) and lets an admin
	// take a type's category away; such a type uses the cluster default. Run:ai's schema
	// requires a category on every type: Arbiter answers null rather than invent one.
	noCategory := difference{why: "a type without a category answers categoryId and categoryName null",
		of: func(ty map[string]any) bool { return ty["categoryId"] == nil && ty["categoryName"] == nil }}
	for route, at := range map[string]string{
		"GET /api/v1/workload-types":                  `/types/\d+`,
		"GET /api/v1/workload-types/{workloadTypeId}": ``,
		"PUT /api/v1/workload-types/{workloadTypeId}": ``,
	} {
		d := noCategory
		d.finding = regexp.MustCompile(`^  ` + at + `/category(Id|Name): Value is not nullable$`)
		deliberatelyDifferent[route] = append(deliberatelyDifferent[route], d)
	}
}

// unexplained are the findings on route, answered body, that no deliberate difference explains.
func unexplained(route string, findings []string, body []byte) []string {
	var answer any
	_ = json.Unmarshal(body, &answer)
	var out []string
	for _, f := range findings {
		if !slices.ContainsFunc(deliberatelyDifferent[route], func(d difference) bool {
			return d.finding.MatchString(f) && d.of(holder(answer, f))
		}) {
			out = append(out, f)
		}
	}
	return out
}

// holder is the object in answer that holds the field a finding ("  /a/0/b: reason") is about.
func holder(answer any, finding string) map[string]any {
	pointer, _, _ := strings.Cut(strings.TrimSpace(finding), ": ")
	steps := strings.Split(strings.Trim(pointer, "/"), "/")
	at := answer
	for _, step := range steps[:len(steps)-1] {
		switch v := at.(type) {
		case map[string]any:
			at = v[step]
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i >= len(v) {
				return nil
			}
			at = v[i]
		}
	}
	m, _ := at.(map[string]any)
	return m
}
