package web

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// FuzzDecodeWorkloadType checks that any body either decodes or is refused with a 4xx and a
// sentence, and that a decoded id field is either absent, null or checked as a UUID.
func FuzzDecodeWorkloadType(f *testing.F) {
	for _, s := range []string{`{}`, `{"priorityId":null}`, `{"priorityId":"6723b9d7-73d1-5e4c-a494-d8fdeddc541c"}`,
		`{"preemptibility":"preemptible","categoryId":"x"}`, `[]`, `{"a":1}`, `{"priorityId":1}`, `{`, `null`, `{}{}`} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPut, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		c := e.NewContext(req, httptest.NewRecorder())
		var r workloadTypeRequest
		err := decodeJSON(c, &r, "categoryId", "priorityId", "preemptibility")
		if err == nil {
			_, err = workloadTypeUpdate(r)
		}
		if err == nil {
			return
		}
		status, msg := statusOf(err)
		var he *httpError
		if status < 400 || status >= 500 || msg == "" || (!errors.As(err, &he) && status != http.StatusRequestEntityTooLarge) {
			t.Fatalf("body %q: status %d message %q (%v)", body, status, msg, err)
		}
	})
}
