package web

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// FuzzDecodeUserCreation checks that any body of POST /users either is refused with a 4xx and
// a sentence or yields an email that matches Run:ai's pattern, fits an address's length and
// is text PostgreSQL stores.
func FuzzDecodeUserCreation(f *testing.F) {
	for _, s := range []string{`{"email":"test@run.ai","resetPassword":false,"notify":true}`, `{"email":"ada@example.com"}`,
		`{}`, `{"email":""}`, `{"email":" ada@example.com "}`, `{"email":"no-at-sign"}`, `{"email":"a@b.c"}`,
		`{"email":"a\u0000@example.com"}`, "{\"email\":\"\xff@example.com\"}", `{"email":"a@example.com","email":"b@example.com"}`,
		`{"Email":"a@example.com"}`, `{"email":1}`, `{"email":"a@example.com","resetPassword":"yes"}`, `{"email":"a@example.com","notify":null}`,
		`{"email":"a@example.com","role":"admin"}`, `[]`, `null`, `{`, `{"email":"a@example.com"}{}`,
		`{"email":"` + strings.Repeat("a", 300) + `@example.com"}`} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		req, err := decodeUserCreation(jsonContext(e, http.MethodPost, body))
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		if !emailPattern.MatchString(req.Email) || len(req.Email) > maxEmail || !utf8.ValidString(req.Email) || strings.ContainsRune(req.Email, 0) {
			t.Fatalf("body %q: accepted email %q", body, req.Email)
		}
	})
}
