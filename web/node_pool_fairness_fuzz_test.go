package web

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"
)

// FuzzDecodeTimeBasedFairness checks that any body of a node pool's time-based fair share
// either is refused with a 4xx and a sentence or decodes into fields each absent, null or of
// its type (the store then checks the ranges).
func FuzzDecodeTimeBasedFairness(f *testing.F) {
	for _, s := range []string{`{}`, `{"enabled":true}`, `{"enabled":null}`, `{"windowSeconds":600,"halfLifeSeconds":0,"kValue":1.5}`,
		`{"windowSeconds":1e30}`, `{"windowSeconds":1.5}`, `{"kValue":"1"}`, `{"kValue":1e400}`, `[]`, `{`, `null`, `{}{}`,
		`{"KValue":1}`, `{"enabled":true,"enabled":false}`, "{\"\xff\":1}", `{"windowSeconds":-9223372036854775809}`} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		var r fairnessRequest
		err := decodeJSON(jsonContext(e, http.MethodPut, body), &r, fairnessFields...)
		if err == nil {
			_, err = r.update()
		}
		if err != nil {
			checkRefusal(t, body, err)
		}
	})
}
