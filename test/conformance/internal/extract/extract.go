// Package extract cuts, from Run:ai's published control-plane OpenAPI document, the part the
// conformance test validates against: the method+path pairs Arbiter serves too, with what a
// validator reads (parameters, request bodies, the responses' schemas, the components they
// reference: field names, types, required lists, enums) and nothing a reader reads (no
// descriptions, summaries or examples except the request bodies' examples the test sends),
// plus the source document's sha256, so that a fresh clone, which has no copy of the
// document, still has what the test needs.
package extract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/arbiterhq/arbiter/web"
)

// SourcePath is where the document sits, relative to the repository's root: the directory
// holding the repository holds shared/ in CI; a fresh clone may not have it.
const SourcePath = "../shared/reference/runai-openapi.json"

// Route is one method and path template as Arbiter registers it (":id" parameters).
type Route struct{ Method, Path string }

// ServedRoutes are the API routes of Arbiter's router, as built with no dependencies: the
// routes do not depend on them.
func ServedRoutes() []Route {
	var out []Route
	for _, r := range web.New(web.Deps{}).Routes() {
		if strings.HasPrefix(r.Path, "/api/") {
			out = append(out, Route{Method: r.Method, Path: r.Path})
		}
	}
	slices.SortFunc(out, func(a, b Route) int { return strings.Compare(a.Path+" "+a.Method, b.Path+" "+b.Method) })
	return slices.Compact(out)
}

var (
	echoParam    = regexp.MustCompile(`:[^/]+`)
	openAPIParam = regexp.MustCompile(`\{[^}]+\}`)
)

// shape is a path template with its parameters' names left out, so that Arbiter's
// /node-pools/:id and the document's /node-pools/{nodepoolId} are the same route.
func shape(path string) string {
	return openAPIParam.ReplaceAllString(echoParam.ReplaceAllString(path, "{}"), "{}")
}

// methods an OpenAPI path item may hold, lower case as the document spells them.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Shared are the document's method+path pairs that Arbiter serves too, as "METHOD /path" with
// the document's spelling of the path, sorted.
func Shared(doc map[string]any, served []Route) []string {
	byShape := map[string]bool{}
	for _, r := range served {
		byShape[strings.ToLower(r.Method)+" "+shape(r.Path)] = true
	}
	var out []string
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for _, m := range methods {
			if _, ok := ops[m]; ok && byShape[m+" "+shape(path)] {
				out = append(out, strings.ToUpper(m)+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Build is the extract of source for the routes served: an OpenAPI document of its own, with
// the shared operations and the components they reach, and info.x-source-sha256 the
// checksum of source.
func Build(source []byte, served []Route) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(source, &doc); err != nil {
		return nil, fmt.Errorf("reading the Run:ai document: %w", err)
	}
	sum := sha256.Sum256(source)
	info, _ := doc["info"].(map[string]any)
	out := map[string]any{
		"openapi": doc["openapi"],
		"info": map[string]any{
			"title":           info["title"],
			"version":         info["version"],
			"x-source":        "shared/reference/runai-openapi.json",
			"x-source-sha256": hex.EncodeToString(sum[:]),
			"x-shared-routes": len(Shared(doc, served)),
		},
	}
	paths := map[string]any{}
	srcPaths, _ := doc["paths"].(map[string]any)
	for _, pair := range Shared(doc, served) {
		method, path, _ := strings.Cut(pair, " ")
		item, _ := srcPaths[path].(map[string]any)
		kept, _ := paths[path].(map[string]any)
		if kept == nil {
			kept = map[string]any{}
			if ps, ok := item["parameters"]; ok {
				kept["parameters"] = strip(ps, false)
			}
			paths[path] = kept
		}
		op, _ := item[strings.ToLower(method)].(map[string]any)
		keptOp := map[string]any{}
		for _, k := range []string{"operationId", "parameters", "responses"} {
			if v, ok := op[k]; ok {
				keptOp[k] = strip(v, false)
			}
		}
		if rb, ok := op["requestBody"]; ok {
			keptOp["requestBody"] = strip(rb, true)
		}
		describeResponses(keptOp["responses"])
		kept[strings.ToLower(method)] = keptOp
	}
	out["paths"] = paths

	// The components the kept operations reach, followed through $ref until none is new.
	components, _ := doc["components"].(map[string]any)
	keptComponents := map[string]any{}
	todo := refs(paths)
	seen := map[string]bool{}
	for len(todo) > 0 {
		ref := todo[0]
		todo = todo[1:]
		if seen[ref] {
			continue
		}
		seen[ref] = true
		parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
		if len(parts) != 2 || !strings.HasPrefix(ref, "#/components/") {
			return nil, fmt.Errorf("the Run:ai document refers to %q, which is not a component", ref)
		}
		group, _ := components[parts[0]].(map[string]any)
		v, ok := group[parts[1]]
		if !ok {
			return nil, fmt.Errorf("the Run:ai document refers to %q, which it does not define", ref)
		}
		v = strip(v, parts[0] == "requestBodies")
		if parts[0] == "responses" {
			describeResponses(map[string]any{parts[1]: v})
		}
		kg, _ := keptComponents[parts[0]].(map[string]any)
		if kg == nil {
			kg = map[string]any{}
			keptComponents[parts[0]] = kg
		}
		kg[parts[1]] = v
		todo = append(todo, refs(v)...)
	}
	out["components"] = keptComponents

	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// refs are the $ref values in v, in the order met.
func refs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if r, ok := v["$ref"].(string); ok {
			out = append(out, r)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, refs(v[k])...)
		}
	case []any:
		for _, e := range v {
			out = append(out, refs(e)...)
		}
	}
	return out
}

// prose are the keywords for a reader, not a validator.
var prose = map[string]bool{"description": true, "summary": true, "externalDocs": true, "tags": true, "deprecated": false}

// namesMaps are the keywords whose value is a map from a name (a field, a status code, a
// media type) to an object: their keys are kept whatever they are.
var nameMaps = map[string]bool{"properties": true, "responses": true, "content": true, "headers": true, "mapping": true, "encoding": true}

// strip is v without prose, examples (kept under a request body's media types when
// keepExamples) and extensions.
func strip(v any, keepExamples bool) any {
	return stripIn(v, keepExamples, false)
}

func stripIn(v any, keepExamples, names bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if !names {
				if prose[k] || strings.HasPrefix(k, "x-") {
					continue
				}
				if k == "example" || k == "examples" {
					if keepExamples && isMediaExample(v) {
						out[k] = exampleValues(k, e)
					}
					continue
				}
			}
			out[k] = stripIn(e, keepExamples, !names && nameMaps[k])
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = stripIn(e, keepExamples, false)
		}
		return out
	}
	return v
}

// isMediaExample says whether an object holding example(s) is a media type object (it has a
// schema beside its examples and no type of its own), not a schema.
func isMediaExample(o map[string]any) bool {
	_, schema := o["schema"]
	_, typ := o["type"]
	return schema && !typ
}

// exampleValues is a media type's example, or its named examples with only their values.
func exampleValues(keyword string, e any) any {
	named, ok := e.(map[string]any)
	if keyword != "examples" || !ok {
		return e
	}
	out := map[string]any{}
	for name, ex := range named {
		if o, ok := ex.(map[string]any); ok {
			if v, ok := o["value"]; ok {
				out[name] = map[string]any{"value": v}
			}
		}
	}
	return out
}

// describeResponses gives each response object in responses (status to response) the empty
// description: OpenAPI requires the field, and its text is for readers.
func describeResponses(responses any) {
	m, _ := responses.(map[string]any)
	for _, r := range m {
		if o, ok := r.(map[string]any); ok {
			if _, ref := o["$ref"]; !ref {
				o["description"] = ""
			}
		}
	}
}
