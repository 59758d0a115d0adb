package web

import "testing"

// TestSafeNext: next after sign-in must be a plain path on this origin; anything a browser
// could read as another host becomes "/". The values are what the query or form decodes to.
func TestSafeNext(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"/\t/evil.example/phish": "/", // browsers drop the tab: //evil.example
		"/%09/x":                 "/", // the same, percent-encoded once more
		"/\\x":                   "/", // browsers read \ as /
		"/%5Cx":                  "/",
		"//x":                    "/",
		"/%2F%2Fx":               "/", // //x once decoded
		"/%2f/x":                 "/",
		"https:x":                "/",
		"https://evil.example/":  "/",
		"javascript:alert(1)":    "/",
		"/\r\nSet-Cookie: x=1":   "/",
		"/%0d%0a":                "/",
		"/x\x7f":                 "/",
		"":                       "/",
		"x":                      "/",
		" /x":                    "/",
		"/login":                 "/",
		"/login?next=/x":         "/",
		"/%6Cogin":               "/",
		"/projects?x=1":          "/projects?x=1",
		"/workloads?filterBy=name%3D%3Dx&sortBy=name": "/workloads?filterBy=name%3D%3Dx&sortBy=name",
		"/departments/3f2a#quota":                     "/departments/3f2a#quota",
		"/":                                           "/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}
