package web

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// checkTokenRequest fails unless err is a 4xx with a sentence, or the request it decoded is
// one grant() can act on without a further check.
func checkTokenRequest(t *testing.T, body string, r tokenRequest, err error) {
	t.Helper()
	if err != nil {
		status, msg := statusOf(err)
		var te *tokenError
		if errors.As(err, &te) {
			status, msg = te.status, te.message
			if te.code == "" {
				t.Fatalf("body %q: a refusal without an OAuth error code", body)
			}
		}
		if status < 400 || status >= 500 || msg == "" {
			t.Fatalf("body %q: status %d message %q (%v)", body, status, msg, err)
		}
		return
	}
	for _, v := range []string{r.grantType, r.clientID, r.clientSecret, r.username, r.password} {
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) || len(v) > maxPassword {
			t.Fatalf("body %q: accepted %q", body, v)
		}
	}
	switch r.grantType {
	case grantClientCredentials:
		if _, err := uuid.Parse(r.clientID); err != nil || r.clientSecret == "" {
			t.Fatalf("body %q: accepted client credentials %q %q", body, r.clientID, r.clientSecret)
		}
	case grantPassword:
		if strings.TrimSpace(r.username) == "" || r.password == "" {
			t.Fatalf("body %q: accepted a password grant without user name or password", body)
		}
	case grantRefreshToken:
		if _, _, ok := auth.ParseRefreshToken(r.refreshToken); !ok || r.clientSecret != "" || r.username != "" || r.password != "" {
			t.Fatalf("body %q: accepted a refresh_token grant with refresh token %q and other credentials", body, r.refreshToken)
		}
	default:
		t.Fatalf("body %q: accepted grant type %q", body, r.grantType)
	}
}

func FuzzDecodeTokenV1(f *testing.F) {
	for _, s := range []string{`{}`, `{"grantType":"client_credentials","clientId":"6723b9d7-73d1-5e4c-a494-d8fdeddc541c","clientSecret":"s"}`,
		`{"grantType":"password","username":"admin","password":"p"}`, `{"grantType":"password","username":" ","password":"p"}`,
		`{"grantType":"implicit"}`, `[]`, `null`, `{`, `{"grantType":1}`, `{"GrantType":"password"}`, "{\"grantType\":\"\xff\"}",
		`{"grantType":"password","username":"a\u0000","password":"p"}`,
		`{"grantType":"client_credentials","clientID":"6723b9d7-73d1-5e4c-a494-d8fdeddc541c","clientSecret":"s"}`,
		`{"grantType":"client_credentials","clientId":"6723b9d7-73d1-5e4c-a494-d8fdeddc541c","clientID":"6723b9d7-73d1-5e4c-a494-d8fdeddc541d","clientSecret":"s"}`,
		`{"grantType":"refresh_token","refreshToken":"arbrt_6723b9d773d15e4ca494d8fdeddc541c_s","clientID":"runai-cli"}`,
		`{"grantType":"refresh_token","refreshToken":"arb_6723b9d773d15e4ca494d8fdeddc541c_s"}`, `{"grantType":"refresh_token"}`,
		`{"grantType":"refresh_token","refreshToken":"arbrt_6723b9d773d15e4ca494d8fdeddc541c_s","password":"p"}`,
		`{"grantType":"password","username":"a","password":"p","refreshToken":"arbrt_x_y"}`} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		r, err := decodeTokenV1(jsonContext(e, http.MethodPost, body))
		checkTokenRequest(t, body, r, err)
	})
}

func FuzzDecodeTokenV2(f *testing.F) {
	for _, s := range []string{``, `grant_type=client_credentials&client_id=6723b9d7-73d1-5e4c-a494-d8fdeddc541c&client_secret=s`,
		`grant_type=password&username=admin&password=p`, `grant_type=password&grant_type=password`, `grant_type=%zz`,
		`grant_type=password;username=a`, `grant_type=password&username=%00&password=p`, `grant_type=password&username=%FF&password=p`,
		`scope=openid&grant_type=password&username=a&password=b`,
		`grant_type=refresh_token&refresh_token=arbrt_6723b9d773d15e4ca494d8fdeddc541c_s`, `grant_type=refresh_token&refresh_token=arbrt_`} {
		f.Add(s)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/api/v2/token", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r, err := decodeTokenV2(e.NewContext(req, httptest.NewRecorder()))
		checkTokenRequest(t, body, r, err)
	})
}
