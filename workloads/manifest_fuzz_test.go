package workloads

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/store"
)

// FuzzManifest checks that any manifest, as a JSON object or as base64 of YAML, is either
// refused with an invalid-field error naming a field of the request, or passes every check and
// is labelled with each pod spec handed to Arbiter's scheduler; never a panic.
func FuzzManifest(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"batch/v1","kind":"Job","spec":{"template":{"spec":{"containers":[{"name":"m","image":"b"}]}}}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"m","image":"b"}]}}`,
		`{"apiVersion":"v1","kind":"Pod","spec":{"hostNetwork":true,"containers":[{"name":"m","image":"b"}]}}`,
		`{"apiVersion":"ray.io/v1","kind":"RayCluster","spec":{"workerGroupSpecs":[{"template":{"spec":{"containers":[{"name":"w","image":"r"}]}}}]}}`,
		`{"apiVersion":"batch/v1","kind":"Job","metadata":{"labels":{"arbiter.dev/project":"other"}},"spec":{"template":{"metadata":{"labels":7},"spec":{"containers":[]}}}}`,
		`{"apiVersion":"batch/v1","kind":"Job","spec":{"template":{"spec":{"containers":"x","volumes":[{"hostPath":{"path":"/"}}]}}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","spec":{"template":{"spec":{"containers":[{"name":"m","securityContext":{"capabilities":{"add":["NET_ADMIN"]}}}]}}}}`,
		`{}`, `{"kind":1}`, `{"containers":null}`, `[]`, `null`, `{"a":{"b":{"c":{"containers":[1]}}}}`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Add("apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: a, image: b}]\n---\nkind: Pod\n", true)
	f.Add("a: &a [*a]\n", true)
	f.Fuzz(func(t *testing.T, text string, asYAML bool) {
		var manifest map[string]any
		var b64 string
		if asYAML {
			b64 = base64.StdEncoding.EncodeToString([]byte(text))
		} else if json.Unmarshal([]byte(text), &manifest) != nil || manifest == nil {
			return
		}
		refused := func(err error) {
			var se *store.Error
			if !errors.As(err, &se) || !errors.Is(se.Kind, store.ErrInvalid) || se.Message == "" ||
				!(strings.HasPrefix(se.Field, "manifest") || strings.HasPrefix(se.Field, "metadata")) {
				t.Fatalf("%q: refused with %#v", text, err)
			}
		}
		u, field, err := DecodeManifest(manifest, b64)
		if err != nil {
			refused(err)
			return
		}
		if _, err := manifestKind(field, u); err != nil {
			refused(err)
			return
		}
		pods, err := checkManifest(field, u, []string{"ns"}, "arbiter")
		if err != nil {
			refused(err)
			return
		}
		own := map[string]string{"arbiter.dev/project": "p"}
		if err := labelManifest(field, u, pods, own, own, "arbiter"); err != nil {
			refused(err)
			return
		}
		for _, p := range pods {
			if p.Spec["schedulerName"] != "arbiter" {
				t.Fatalf("%q: pod spec at %s not handed to Arbiter", text, p.Path)
			}
		}
		if _, err := u.MarshalJSON(); err != nil {
			t.Fatalf("%q: the checked object does not encode: %v", text, err)
		}
	})
}
