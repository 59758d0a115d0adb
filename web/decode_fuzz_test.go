package web

import (
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// checkRefusal fails unless err is a 4xx with a sentence.
func checkRefusal(t *testing.T, body string, err error) {
	t.Helper()
	status, msg := statusOf(err)
	var he *httpError
	if status < 400 || status >= 500 || msg == "" || (!errors.As(err, &he) && status != http.StatusRequestEntityTooLarge) {
		t.Fatalf("body %q: status %d message %q (%v)", body, status, msg, err)
	}
}

func jsonContext(e *echo.Echo, method, body string) echo.Context {
	req := httptest.NewRequest(method, "/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return e.NewContext(req, httptest.NewRecorder())
}

// FuzzDecodeWorkloadType checks that any body either decodes or is refused with a 4xx and a
// sentence, and that a decoded id field is either absent, null or checked as a UUID.
func FuzzDecodeWorkloadType(f *testing.F) {
	for _, s := range []string{`{}`, `{"priorityId":null}`, `{"priorityId":"6723b9d7-73d1-5e4c-a494-d8fdeddc541c"}`,
		`{"preemptibility":"preemptible","categoryId":"x"}`, `[]`, `{"a":1}`, `{"priorityId":1}`, `{`, `null`, `{}{}`,
		`{"preemptibility":"a\u0000"}`, "{\"preemptibility\":\"\xff\"}", `{"preemptibility":"a","preemptibility":"b"}`,
		`{"PriorityId":null}`, `{"priorityid":null}`, "{\"\xff\":1}"} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		var r workloadTypeRequest
		err := decodeJSON(jsonContext(e, http.MethodPut, body), &r, "categoryId", "priorityId", "preemptibility")
		if err == nil {
			_, err = workloadTypeUpdate(r)
		}
		if err == nil {
			if !cleanText(r.Preemptibility.Value) {
				t.Fatalf("body %q: accepted preemptibility %q", body, r.Preemptibility.Value)
			}
			return
		}
		checkRefusal(t, body, err)
	})
}

// FuzzDecodeProject checks that a project body either is refused with a 4xx and a sentence or
// decodes into values PostgreSQL stores: every number within its integer column's range and
// every text UTF-8 without NUL.
func FuzzDecodeProject(f *testing.F) {
	for _, s := range []string{`{}`, `{"name":"alpha","namespaces":["a","b"]}`, `{"policy":{"minRuntimeSeconds":9223372036854775807}}`,
		`{"policy":{"minRuntimeSeconds":9223372036854775808}}`, `{"policy":{"minRuntimeSeconds":1.5}}`, `{"policy":{"minRuntimeSeconds":-1}}`,
		`{"resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":4294967296,"limit":-2,"overQuotaWeight":2147483648}}]}`,
		`{"resources":[{"gpu":{"deserved":1e3}}]}`, `{"name":"a\u0000"}`, "{\"name\":\"\xc3\x28\"}", `{"namespaces":["\u0000"]}`,
		`{"name":"a","name":"b"}`, `{"Policy":{}}`, `{"policy":{"Queueing":"strict"}}`, `{"policy":{"queueing":"a","queueing":"b"}}`,
		`{"namespaces":"x"}`, `{"policy":null}`, `{"resources":null}`, `{"resources":[{"gpu":{"deserved":"1"}}]}`} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		var r projectRequest
		err := decodeJSON(jsonContext(e, http.MethodPut, body), &r, projectFields...)
		if err == nil {
			_, err = r.update()
		}
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		inRange := func(p *int, lo int) bool { return p == nil || (*p >= lo && *p <= math.MaxInt32) }
		p := r.Policy.Value
		if !inRange(&p.MinRuntimeSeconds.Value, 0) {
			t.Fatalf("body %q: accepted minRuntimeSeconds %d", body, p.MinRuntimeSeconds.Value)
		}
		for _, q := range r.Resources.Value {
			if !inRange(q.GPU.Deserved, 0) || !inRange(q.GPU.Limit, -1) || !inRange(q.GPU.OverQuotaWeight, 0) || !cleanText(q.NodePool.Name) {
				t.Fatalf("body %q: accepted quota %+v", body, q)
			}
		}
		texts := append([]string{r.Name.Value, r.DepartmentID.Value, p.MinPriority.Value, p.MaxPriority.Value, p.PreemptionOrder.Value,
			p.PreemptionMode.Value, p.Queueing.Value}, r.Namespaces.Value...)
		for _, s := range texts {
			if !cleanText(s) {
				t.Fatalf("body %q: accepted text %q", body, s)
			}
		}
	})
}

func cleanText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
