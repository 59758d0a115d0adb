package web_test

import (
	"fmt"
	"testing"

	"github.com/arbiterhq/arbiter/web"
)

// TestRoutes_NoMethodAndPathRegisteredTwice: Echo keeps the later of two handlers registered
// for one method and path, silently, so swapping two handlers in the list would change what a
// route does. Building the server refuses a second registration.
func TestRoutes_NoMethodAndPathRegisteredTwice(t *testing.T) {
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%v", r)
			}
		}()
		web.New(web.Deps{})
		return nil
	}()
	if err != nil {
		t.Fatalf("building the server: %v", err)
	}
}
