package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/arbiterhq/arbiter/views"
)

// TestTextFromPeopleIsEscapedOnPages: names and subjects people type come back on the
// console's pages as text, never as markup (templ escapes; nothing renders raw strings).
func TestTextFromPeopleIsEscapedOnPages(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	const keyName, subject = `<script>alert("key")</script>`, `x"><img src=x onerror=alert(1)>`
	if r := do(t, srv, "POST", "/api/v1/api-keys", "application/json",
		`{"name":`+jsonString(keyName)+`,"role":"viewer","scopeType":"system"}`); r.status != http.StatusCreated {
		t.Fatalf("create API key = %d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/api/v1/access-rules", "application/json",
		`{"subjectType":"user","subject":`+jsonString(subject)+`,"role":"viewer","scopeType":"system"}`); r.status != http.StatusCreated {
		t.Fatalf("create access rule = %d %s", r.status, r.body)
	}
	for _, page := range []string{"/access", "/event-history"} {
		r := do(t, srv, "GET", page, "", "")
		if r.status != 200 {
			t.Fatalf("GET %s = %d", page, r.status)
		}
		body := string(r.body)
		for _, raw := range []string{"<script>alert", "<img src=x"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s carries %q unescaped", page, raw)
			}
		}
		if !strings.Contains(body, "&lt;script&gt;") && !strings.Contains(body, "&lt;img") {
			t.Errorf("%s does not show the typed text escaped", page)
		}
	}
}

// TestDuplicateNamesUnderRace: parallel creates of one name leave one object; every other
// caller hears 409 with the sentence, none a 500 (the unique index decides, not a read).
func TestDuplicateNamesUnderRace(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	const n = 8
	statuses := make([]int, n)
	bodies := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := do(t, srv, "POST", "/api/v1/org-unit/departments", "application/json", `{"name":"race"}`)
			statuses[i], bodies[i] = r.status, string(r.body)
		}()
	}
	wg.Wait()
	created := 0
	for i, st := range statuses {
		switch st {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
			if !strings.Contains(bodies[i], "already exists") {
				t.Errorf("409 without the sentence: %s", bodies[i])
			}
		default:
			t.Errorf("parallel create answered %d: %s", st, bodies[i])
		}
	}
	if created != 1 {
		t.Errorf("%d of %d parallel creates of one name succeeded, want exactly 1", created, n)
	}
	if got := list[views.Department](t, srv, "/api/v1/org-unit/departments?filterBy=name==race", "departments"); len(got) != 1 {
		t.Errorf("%d departments named race, want 1", len(got))
	}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
