package web

import (
	"net/http"
	"testing"

	"github.com/arbiterhq/arbiter/workload/native"
	"github.com/labstack/echo/v4"
)

// FuzzDecodeSubmission checks that any submission body either decodes and is checked into a
// workload whose objects build, or is refused with a 4xx and a sentence: never a panic or a 500.
func FuzzDecodeSubmission(f *testing.F) {
	for _, s := range []string{`{}`, `{"name":"a","projectId":"p","spec":{"image":"x"}}`,
		`{"name":"a","projectId":"p","spec":{"image":"x","numWorkers":3,"compute":{"gpuDevicesRequest":1,"cpuCoreRequest":0.5,"cpuMemoryRequest":"1Gi"}}}`,
		`{"name":"a","projectId":"p","spec":{"image":"x","servingPort":{"container":80},"autoscaling":{"minReplicas":2}}}`,
		`{"name":"a","projectId":"p","spec":{"image":"x","command":"sh -c 'echo \"hi\"'","args":"a\\ b"}}`,
		`{"name":"a","projectId":"p","spec":{"image":"x","compute":{"gpuDevicesRequest":1e40}}}`,
		`{"name":"a","projectId":"p","spec":{"image":"x","compute":{"cpuCoreRequest":-0}}}`,
		`{"name":"a","spec":{"environmentVariables":[{"name":"A","value":"\u0000"}]}}`, `{"spec":null}`, `{"spec":{"nodePools":[""]}}`,
		`[]`, `{`, `null`, `{"Name":"a"}`, "{\"name\":\"\xff\"}"} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		for _, k := range native.Kinds {
			var r native.Request
			err := decodeJSON(jsonContext(e, http.MethodPost, body), &r, native.Accepted...)
			if err == nil {
				var w native.Workload
				if w, err = parseSubmission(k, r); err == nil {
					w.Namespace, w.Project = "ns", "p"
					_ = w.Named("abcde").Objects()
					continue
				}
			}
			checkRefusal(t, body, err)
		}
	})
}
