package conformance

import (
	"net/url"
	"sync"
	"testing"
)

// keysMade are the service account and access keys the key checks make, read by the checks
// after them, for one run of the checks (one org).
type keysMade struct {
	serviceAccountID, serviceAccountSecret string
	accessKeyID, accessKeySecret           string
	secondAccessKeyID                      string
}

var keysByRun sync.Map // *org -> *keysMade

func keysOf(o *org) *keysMade {
	k, _ := keysByRun.LoadOrStore(o, &keysMade{})
	return k.(*keysMade)
}

// tokenFor trades client credentials for a token through /api/v2/token, as a script would.
func tokenFor(t *testing.T, c *client, clientID, secret string, want int) {
	t.Helper()
	c.do(t, exchange{method: "POST", route: "/api/v2/token", body: url.Values{"grant_type": {"client_credentials"},
		"client_id": {clientID}, "client_secret": {secret}}, want: want})
}

type created struct{ ID, ClientID, ClientSecret string }

// The service accounts (Arbiter's API keys) and the signed-in admin's own access keys.
func init() {
	checked = append(checked, []struct {
		route string
		check func(t *testing.T, c *client, o *org)
	}{
		{"POST /api/v1/service-accounts", func(t *testing.T, c *client, o *org) {
			// Run:ai's name, with Arbiter's role binding beside it.
			var sa created
			c.do(t, exchange{method: "POST", route: "/api/v1/service-accounts", body: map[string]any{"name": "service-account-123",
				"role": "viewer", "scopeType": "project", "scopeId": o.projectID}, want: 201, out: &sa})
			if sa.ClientID != sa.ID || sa.ClientSecret == "" {
				t.Fatalf("the new service account = %+v, want its id as clientId and a secret", sa)
			}
			keysOf(o).serviceAccountID, keysOf(o).serviceAccountSecret = sa.ID, sa.ClientSecret
			tokenFor(t, c, sa.ClientID, sa.ClientSecret, 200)
			// Deliberately different: without a role the account would hold no access in Arbiter.
			c.do(t, exchange{method: "POST", route: "/api/v1/service-accounts", body: map[string]any{"name": "no-role"}, want: 400})
			c.do(t, exchange{method: "POST", route: "/api/v1/service-accounts", body: map[string]any{"name": "service-account-123", "role": "viewer"}, want: 409})
		}},
		{"GET /api/v1/service-accounts", func(t *testing.T, c *client, o *org) {
			var list []struct{ ID string }
			c.do(t, exchange{method: "GET", route: "/api/v1/service-accounts", want: 200, out: &list})
			found := false
			for _, sa := range list {
				found = found || sa.ID == keysOf(o).serviceAccountID
			}
			if !found {
				t.Errorf("the service accounts %v lack the one made", list)
			}
		}},
		{"GET /api/v1/service-accounts/{serviceAccountId}", func(t *testing.T, c *client, o *org) {
			c.do(t, exchange{method: "GET", route: "/api/v1/service-accounts/{serviceAccountId}", params: map[string]string{"serviceAccountId": keysOf(o).serviceAccountID}, want: 200})
			c.do(t, exchange{method: "GET", route: "/api/v1/service-accounts/{serviceAccountId}", params: map[string]string{"serviceAccountId": foreignClusterID}, want: 404})
		}},
		{"PATCH /api/v1/service-accounts/{serviceAccountId}", func(t *testing.T, c *client, o *org) {
			k := keysOf(o)
			params := map[string]string{"serviceAccountId": k.serviceAccountID}
			c.do(t, exchange{method: "PATCH", route: "/api/v1/service-accounts/{serviceAccountId}", params: params, body: map[string]any{"enabled": false}, want: 200})
			tokenFor(t, c, k.serviceAccountID, k.serviceAccountSecret, 401)
			c.do(t, exchange{method: "PATCH", route: "/api/v1/service-accounts/{serviceAccountId}", params: params, body: map[string]any{"enabled": true}, want: 200})
			tokenFor(t, c, k.serviceAccountID, k.serviceAccountSecret, 200)
		}},
		{"POST /api/v1/service-accounts/{serviceAccountId}/secret", func(t *testing.T, c *client, o *org) {
			k := keysOf(o)
			var regenerated struct{ ClientSecret string }
			c.do(t, exchange{method: "POST", route: "/api/v1/service-accounts/{serviceAccountId}/secret", params: map[string]string{"serviceAccountId": k.serviceAccountID},
				want: 200, out: &regenerated})
			tokenFor(t, c, k.serviceAccountID, k.serviceAccountSecret, 401)
			tokenFor(t, c, k.serviceAccountID, regenerated.ClientSecret, 200)
		}},
		{"DELETE /api/v1/service-accounts/{serviceAccountId}", func(t *testing.T, c *client, o *org) {
			params := map[string]string{"serviceAccountId": keysOf(o).serviceAccountID}
			c.do(t, exchange{method: "DELETE", route: "/api/v1/service-accounts/{serviceAccountId}", params: params, want: 204})
			c.do(t, exchange{method: "GET", route: "/api/v1/service-accounts/{serviceAccountId}", params: params, want: 404})
			c.do(t, exchange{method: "DELETE", route: "/api/v1/service-accounts/{serviceAccountId}", params: params, want: 404})
		}},
		{"POST /api/v1/access-keys", func(t *testing.T, c *client, o *org) {
			// The admin signed in with a password: a person, who may make their own keys.
			var ak, second created
			c.do(t, exchange{method: "POST", route: "/api/v1/access-keys", body: map[string]any{"name": "access-key-name"}, want: 201, out: &ak})
			c.do(t, exchange{method: "POST", route: "/api/v1/access-keys", body: map[string]any{"name": "access-key-name"}, want: 409})
			c.do(t, exchange{method: "POST", route: "/api/v1/access-keys", body: map[string]any{"name": "another-access-key"}, want: 201, out: &second})
			keysOf(o).accessKeyID, keysOf(o).accessKeySecret, keysOf(o).secondAccessKeyID = ak.ID, ak.ClientSecret, second.ID
			tokenFor(t, c, ak.ClientID, ak.ClientSecret, 200)
		}},
		{"GET /api/v1/access-keys", func(t *testing.T, c *client, o *org) {
			var list struct{ AccessKeys []struct{ ID string } }
			c.do(t, exchange{method: "GET", route: "/api/v1/access-keys", want: 200, out: &list})
			if len(list.AccessKeys) != 2 {
				t.Errorf("the admin's access keys = %v, want the two made", list.AccessKeys)
			}
		}},
		{"GET /api/v1/access-keys/{accessKeyId}", func(t *testing.T, c *client, o *org) {
			c.do(t, exchange{method: "GET", route: "/api/v1/access-keys/{accessKeyId}", params: map[string]string{"accessKeyId": keysOf(o).accessKeyID}, want: 200})
			c.do(t, exchange{method: "GET", route: "/api/v1/access-keys/{accessKeyId}", params: map[string]string{"accessKeyId": foreignClusterID}, want: 404})
		}},
		{"POST /api/v1/access-keys/{accessKeyId}/secret", func(t *testing.T, c *client, o *org) {
			k := keysOf(o)
			var regenerated struct{ ClientSecret string }
			c.do(t, exchange{method: "POST", route: "/api/v1/access-keys/{accessKeyId}/secret", params: map[string]string{"accessKeyId": k.accessKeyID}, want: 200, out: &regenerated})
			tokenFor(t, c, k.accessKeyID, k.accessKeySecret, 401)
			tokenFor(t, c, k.accessKeyID, regenerated.ClientSecret, 200)
		}},
		{"GET /api/v1/administration/access-keys", func(t *testing.T, c *client, o *org) {
			var all struct {
				AccessKeys []struct{ ID, CreatedBy string }
			}
			c.do(t, exchange{method: "GET", route: "/api/v1/administration/access-keys", want: 200, out: &all})
			if len(all.AccessKeys) != 2 {
				t.Errorf("every access key = %v, want the admin's two", all.AccessKeys)
			}
			var one struct{ AccessKeys []struct{ ID string } }
			c.do(t, exchange{method: "GET", route: "/api/v1/administration/access-keys", query: url.Values{"clientId": {keysOf(o).accessKeyID}, "createdBy": {"admin"}},
				want: 200, out: &one})
			if len(one.AccessKeys) != 1 || one.AccessKeys[0].ID != keysOf(o).accessKeyID {
				t.Errorf("the access keys by clientId and createdBy = %v, want the one", one.AccessKeys)
			}
		}},
		{"DELETE /api/v1/access-keys/{accessKeyId}", func(t *testing.T, c *client, o *org) {
			params := map[string]string{"accessKeyId": keysOf(o).accessKeyID}
			c.do(t, exchange{method: "DELETE", route: "/api/v1/access-keys/{accessKeyId}", params: params, want: 204})
			c.do(t, exchange{method: "DELETE", route: "/api/v1/access-keys/{accessKeyId}", params: params, want: 404})
		}},
		{"DELETE /api/v1/administration/access-keys/{accessKeyId}", func(t *testing.T, c *client, o *org) {
			params := map[string]string{"accessKeyId": keysOf(o).secondAccessKeyID}
			c.do(t, exchange{method: "DELETE", route: "/api/v1/administration/access-keys/{accessKeyId}", params: params, want: 204})
			c.do(t, exchange{method: "DELETE", route: "/api/v1/administration/access-keys/{accessKeyId}", params: params, want: 404})
		}},
	}...)
}
