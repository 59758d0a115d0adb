package conformance

import (
	"net/url"
	"testing"
)

// The users routes: the admin the checks sign in as is the bootstrap admin, the first user;
// each check makes the users it changes, so none depends on another's.
func init() {
	checked = append(checked, []struct {
		route string
		check func(t *testing.T, c *client, o *org)
	}{
		{"GET /api/v1/users", func(t *testing.T, c *client, o *org) {
			var all []struct{ Username string }
			c.do(t, exchange{method: "GET", route: "/api/v1/users", want: 200, out: &all})
			if len(all) == 0 || all[0].Username != "admin" {
				t.Errorf("the users are %v, want the bootstrap admin first", all)
			}
			c.do(t, exchange{method: "GET", route: "/api/v1/users", query: url.Values{"filterBy": {"username=@adm,isLocal==true"},
				"sortBy": {"username"}, "sortOrder": {"desc"}, "offset": {"0"}, "limit": {"10"}, "search": {"ad"}}, want: 200})
		}},
		{"GET /api/v1/users/count", func(t *testing.T, c *client, o *org) {
			counted(t, c, "/api/v1/users/count", url.Values{"filterBy": {"username==admin"}}, 1)
		}},
		{"POST /api/v1/users", func(t *testing.T, c *client, o *org) {
			// The schema's own example, with an address of this test.
			created := newUser(t, c, "created@example.com")
			if created.TempPassword == "" {
				t.Error("the created user has no tempPassword")
			}
			c.do(t, exchange{method: "POST", route: "/api/v1/users", body: map[string]any{"email": "created@example.com"}, want: 409})
			c.do(t, exchange{method: "POST", route: "/api/v1/users", body: map[string]any{"email": "not an address"}, want: 400})
		}},
		{"GET /api/v1/users/{userId}", func(t *testing.T, c *client, o *org) {
			u := newUser(t, c, "read@example.com")
			var got struct{ Username string }
			c.do(t, exchange{method: "GET", route: "/api/v1/users/{userId}", params: map[string]string{"userId": u.ID}, want: 200, out: &got})
			if got.Username != "read@example.com" {
				t.Errorf("GET the user answers %q", got.Username)
			}
			c.do(t, exchange{method: "GET", route: "/api/v1/users/{userId}", params: map[string]string{"userId": foreignClusterID}, want: 404})
		}},
		{"POST /api/v1/users/{userId}/password", func(t *testing.T, c *client, o *org) {
			u := newUser(t, c, "reset@example.com")
			var got struct{ TempPassword string }
			c.do(t, exchange{method: "POST", route: "/api/v1/users/{userId}/password", params: map[string]string{"userId": u.ID}, want: 200, out: &got})
			if got.TempPassword == "" || got.TempPassword == u.TempPassword {
				t.Errorf("the reset answered tempPassword %q, want a new one", got.TempPassword)
			}
		}},
		{"POST /api/v1/users/{userId}/logout", func(t *testing.T, c *client, o *org) {
			u := newUser(t, c, "logout@example.com")
			c.do(t, exchange{method: "POST", route: "/api/v1/users/{userId}/logout", params: map[string]string{"userId": u.ID}, want: 200})
		}},
		{"DELETE /api/v1/users/{userId}", func(t *testing.T, c *client, o *org) {
			u := newUser(t, c, "delete@example.com")
			c.do(t, exchange{method: "DELETE", route: "/api/v1/users/{userId}", params: map[string]string{"userId": u.ID}, want: 204})
			c.do(t, exchange{method: "DELETE", route: "/api/v1/users/{userId}", params: map[string]string{"userId": u.ID}, want: 404})
			// The bootstrap admin is the last local admin who can sign in.
			var admins []struct{ ID string }
			c.do(t, exchange{method: "GET", route: "/api/v1/users", query: url.Values{"filterBy": {"username==admin"}}, want: 200, out: &admins})
			if len(admins) != 1 {
				t.Fatalf("%d users named admin", len(admins))
			}
			c.do(t, exchange{method: "DELETE", route: "/api/v1/users/{userId}", params: map[string]string{"userId": admins[0].ID}, want: 400})
		}},
	}...)
}

// createdUser is Run:ai's UserPostResponse.
type createdUser struct{ ID, Username, TempPassword string }

// newUser creates a local user with the body of the document's example of UserCreationRequest1.
func newUser(t *testing.T, c *client, email string) createdUser {
	t.Helper()
	var u createdUser
	c.do(t, exchange{method: "POST", route: "/api/v1/users", body: map[string]any{"email": email, "resetPassword": false, "notify": true}, want: 201, out: &u})
	if u.ID == "" || u.Username != email {
		t.Fatalf("created %+v, want an id and %s", u, email)
	}
	return u
}
