package web

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/arbiterhq/arbiter/views"
)

// A flash carries what a change did from the POST that made it to the page the browser is sent
// to (Post/Redirect/Get): a short-lived cookie on that page's path, signed under the server's
// form key (every replica's) together with the caller's subject, read once and then cleared.
// It holds only what the page says of the outcome, never an instruction; a reload after it is
// read shows the page without it.

const (
	flashCookie   = "arbiter_flash"
	flashTTL      = 2 * time.Minute
	flashKeyLabel = "arbiter flash\x00"
	// flashBytes bounds the outcome carried, well under a browser's 4 KB for a cookie.
	flashBytes = 2800
)

// bulkFlash is a bulk change's outcome as the Workloads page shows it after the redirect: the
// outcomes that fit, refusals first, and how many more there were of each.
type bulkFlash struct {
	Outcomes []views.BulkOutcome `json:"o"`
	More     map[string]int      `json:"m,omitempty"`
}

// flashMAC signs a flash for the caller it was made for: another caller's flash is not shown.
func (f formSigner) flashMAC(subject string, payload []byte) []byte {
	return f.Sum(flashKeyLabel, []byte(subject), []byte{0}, payload)
}

// setBulkFlash keeps the outcome for the next GET of path by the same caller.
func (l layout) setBulkFlash(c echo.Context, path string, outcomes []views.BulkOutcome) {
	// The outcomes that fit, refusals first (they need the person's attention), shown in the
	// order they were made.
	keep := make([]bool, len(outcomes))
	size := 0
	for _, changed := range []bool{false, true} {
		for i, o := range outcomes {
			if (o.Outcome == "changed") != changed {
				continue
			}
			b, _ := json.Marshal(o)
			if size+len(b) > flashBytes {
				continue
			}
			size += len(b)
			keep[i] = true
		}
	}
	var fl bulkFlash
	for i, o := range outcomes {
		if keep[i] {
			fl.Outcomes = append(fl.Outcomes, o)
			continue
		}
		if fl.More == nil {
			fl.More = map[string]int{}
		}
		fl.More[o.Outcome]++
	}
	payload, _ := json.Marshal(fl)
	value := base64.RawURLEncoding.EncodeToString(payload) + "." +
		base64.RawURLEncoding.EncodeToString(l.forms.flashMAC(identity(c).Subject, payload))
	c.SetCookie(&http.Cookie{Name: flashCookie, Value: value, Path: path, MaxAge: int(flashTTL / time.Second),
		HttpOnly: true, Secure: c.Scheme() == "https", SameSite: http.SameSiteLaxMode})
}

// takeBulkFlash reads the caller's flash for this page and clears it; ok is false when there
// is none (or it is not this server's, or not this caller's).
func (l layout) takeBulkFlash(c echo.Context) (fl bulkFlash, ok bool) {
	ck, err := c.Cookie(flashCookie)
	if err != nil || ck.Value == "" {
		return fl, false
	}
	c.SetCookie(&http.Cookie{Name: flashCookie, Value: "", Path: c.Request().URL.Path, MaxAge: -1,
		HttpOnly: true, Secure: c.Scheme() == "https", SameSite: http.SameSiteLaxMode})
	enc, sig, found := strings.Cut(ck.Value, ".")
	if !found {
		return fl, false
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(enc)
	sum, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !l.forms.Verify(sum, flashKeyLabel, []byte(identity(c).Subject), []byte{0}, payload) {
		return fl, false
	}
	if json.Unmarshal(payload, &fl) != nil {
		return bulkFlash{}, false
	}
	return fl, true
}
