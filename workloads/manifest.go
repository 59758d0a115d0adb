package workloads

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/arbiterhq/arbiter/store"
)

// This file reads a manifest submitted through Run:ai's Workloads V2 (POST /api/v2/workloads,
// docs/api.md "Workloads V2"): Run:ai's way to run a kind it has no form for. A manifest is a
// way into the cluster for anyone who may submit to a project, so what it may be is narrow:
// one object of a kind Arbiter schedules (ManifestKinds); the checks of what it may hold are
// in manifest_checks.go. Everything here is pure: it reads and changes the object, and asks
// nothing of the cluster.

// ManifestKind is a kind a manifest may be: a top owner Arbiter watches and schedules the pods
// of (scheduler/kube's watched owners), or a bare Pod.
type ManifestKind struct {
	Group, Version, Kind, Resource string
}

// APIVersion is the kind's apiVersion as a manifest writes it.
func (k ManifestKind) APIVersion() string {
	return schema.GroupVersion{Group: k.Group, Version: k.Version}.String()
}

// GVR is the resource the kind's objects are created as.
func (k ManifestKind) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource}
}

// ManifestKinds are the kinds a manifest may be. The Helm chart's ClusterRole grants create
// and delete on exactly these (test/deploy checks it), and each is a kind the scheduler
// watches (scheduler/kube checks it).
var ManifestKinds = []ManifestKind{
	{"", "v1", "Pod", "pods"},
	{"batch", "v1", "Job", "jobs"},
	{"batch", "v1", "CronJob", "cronjobs"},
	{"apps", "v1", "Deployment", "deployments"},
	{"apps", "v1", "ReplicaSet", "replicasets"},
	{"apps", "v1", "StatefulSet", "statefulsets"},
	{"kubeflow.org", "v1", "PyTorchJob", "pytorchjobs"},
	{"kubeflow.org", "v1", "TFJob", "tfjobs"},
	{"kubeflow.org", "v1", "JAXJob", "jaxjobs"},
	{"kubeflow.org", "v1", "XGBoostJob", "xgboostjobs"},
	{"kubeflow.org", "v2beta1", "MPIJob", "mpijobs"},
	{"ray.io", "v1", "RayCluster", "rayclusters"},
	{"ray.io", "v1", "RayJob", "rayjobs"},
	{"leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", "leaderworkersets"},
}

// ManifestKindOf is the manifest kind of a workload record's top owner (its API group and
// kind), if it is one.
func ManifestKindOf(group, kind string) (ManifestKind, bool) {
	i := slices.IndexFunc(ManifestKinds, func(k ManifestKind) bool { return k.Group == group && k.Kind == kind })
	if i < 0 {
		return ManifestKind{}, false
	}
	return ManifestKinds[i], true
}

// MaxManifestBytes bounds a manifest, as JSON (a YAML one once read): far more than any
// workload's object needs, well under the API server's limit of an object and the request
// body's (1 MiB), so that a manifest too large is refused naming the field.
const MaxManifestBytes = 256 << 10

// DecodeManifest reads a manifest sent as JSON (field "manifest", the object as decoded) or as
// base64 of YAML or JSON ("manifestBase64Encoded"), exactly one of the two, into one object.
// Its refusals name the field; numbers become int64 or float64, as the API machinery's own
// decoder makes them.
func DecodeManifest(manifest map[string]any, base64Text string) (*unstructured.Unstructured, string, error) {
	switch {
	case manifest != nil && base64Text != "":
		return nil, "manifest", store.InvalidField("manifest", "send the manifest once: either manifest (a JSON object) or manifestBase64Encoded (base64 of YAML), not both")
	case manifest == nil && base64Text == "":
		return nil, "manifest", store.InvalidField("manifest", "manifest is required: the Kubernetes object to create, as a JSON object (or base64 of YAML in manifestBase64Encoded)")
	case manifest != nil:
		raw, err := utiljson.Marshal(manifest)
		if err != nil {
			return nil, "manifest", store.InvalidField("manifest", "manifest is not a JSON object: %v", err)
		}
		u, err := decodeManifestJSON("manifest", raw)
		return u, "manifest", err
	}
	const field = "manifestBase64Encoded"
	if base64.StdEncoding.DecodedLen(len(base64Text)) > MaxManifestBytes {
		return nil, field, tooLarge(field, base64.StdEncoding.DecodedLen(len(base64Text)))
	}
	text, err := base64.StdEncoding.DecodeString(strings.TrimSpace(base64Text))
	if err != nil {
		return nil, field, store.InvalidField(field, "manifestBase64Encoded is not base64 (standard alphabet, with padding): %v", err)
	}
	docs, err := yamlDocuments(text)
	if err != nil {
		return nil, field, store.InvalidField(field, "manifestBase64Encoded is not YAML: %v", err)
	}
	if len(docs) != 1 {
		return nil, field, store.InvalidField(field, "manifestBase64Encoded holds %d YAML documents; send one object per workload", len(docs))
	}
	raw, err := yaml.YAMLToJSONStrict(docs[0])
	if err != nil {
		return nil, field, store.InvalidField(field, "manifestBase64Encoded is not YAML of one object: %v", err)
	}
	u, err := decodeManifestJSON(field, raw)
	return u, field, err
}

// yamlDocuments splits a YAML stream into its documents that hold anything.
func yamlDocuments(text []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(text)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
}

// stripComments drops the lines of a YAML document that are only a comment, so that a
// document of comments counts as empty.
func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '#' {
			continue
		}
		out = append(out, line...)
	}
	return out
}

// decodeManifestJSON reads one JSON object, bounded, with the API machinery's numbers.
func decodeManifestJSON(field string, raw []byte) (*unstructured.Unstructured, error) {
	if len(raw) > MaxManifestBytes {
		return nil, tooLarge(field, len(raw))
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		return nil, store.InvalidField(field, "%s is not one JSON object: %v", field, err)
	}
	if obj == nil {
		return nil, store.InvalidField(field, "%s is empty; send the Kubernetes object to create", field)
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

func tooLarge(field string, n int) error {
	return store.InvalidField(field, "%s is %d bytes; a manifest may be at most %d bytes (256 KiB): split the workload, or move large data into a volume or an image", field, n, MaxManifestBytes)
}

// kindList names the manifest kinds as apiVersion/kind, for a refusal.
func kindList() string {
	names := make([]string, 0, len(ManifestKinds))
	for _, k := range ManifestKinds {
		names = append(names, k.APIVersion()+" "+k.Kind)
	}
	return strings.Join(names, ", ")
}

// manifestKind is the kind of a manifest, which must be one of ManifestKinds.
func manifestKind(field string, u *unstructured.Unstructured) (ManifestKind, error) {
	apiVersion, kind := stringAt(u.Object, "apiVersion"), stringAt(u.Object, "kind")
	if apiVersion == "" || kind == "" {
		return ManifestKind{}, store.InvalidField(field+".kind", "%s needs apiVersion and kind; Arbiter schedules these kinds: %s", field, kindList())
	}
	for _, k := range ManifestKinds {
		if k.APIVersion() == apiVersion && k.Kind == kind {
			return k, nil
		}
	}
	return ManifestKind{}, store.InvalidField(field+".kind", "%s.kind %s %s is not a kind Arbiter schedules; use one of: %s", field, apiVersion, kind, kindList())
}

// stringAt is the string at key of m ("" when absent or not a string).
func stringAt(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
