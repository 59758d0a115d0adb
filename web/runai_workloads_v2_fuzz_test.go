package web

import (
	"errors"
	"net/http"
	"testing"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workloads"
	"github.com/labstack/echo/v4"
)

// FuzzDecodeWorkloadV2 checks that any Workloads V2 body either decodes into a request whose
// manifest reads (or is refused with a 400 naming the field), or is refused with a 4xx and a
// sentence: never a panic or a 500.
func FuzzDecodeWorkloadV2(f *testing.F) {
	for _, s := range []string{`{}`, `{"metadata":{"name":"a","projectId":"p"},"manifest":{"apiVersion":"v1","kind":"Pod"}}`,
		`{"metadata":{"clusterId":"x"},"manifest":{}}`, `{"metadata":{"clusterId":null}}`, `{"metadata":{"priority":null,"preemptibility":"x"}}`,
		`{"metadata":{},"manifestBase64Encoded":"YXBpVmVyc2lvbjogdjEKa2luZDogUG9kCg=="}`, `{"metadata":{},"manifestBase64Encoded":"%%%"}`,
		`{"metadata":{},"manifest":{"a":1,"a":2}}`, `{"metadata":{},"manifest":[]}`, `{"Metadata":{}}`, `{"metadata":{},"manifest":{"x":1e400}}`,
		`[]`, `{`, `null`, "{\"metadata\":{\"name\":\"\xff\"}}"} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		req, err := decodeWorkloadV2(jsonContext(e, http.MethodPost, body))
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		if _, _, err := workloads.DecodeManifest(req.Manifest, req.ManifestBase64); err != nil {
			var se *store.Error
			if status, msg := statusOf(err); !errors.As(err, &se) || status != http.StatusBadRequest || msg == "" || se.Field == "" {
				t.Fatalf("body %q: status %d message %q (%v)", body, status, msg, err)
			}
		}
	})
}
