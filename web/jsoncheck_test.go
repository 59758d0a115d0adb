package web

import (
	"reflect"
	"strings"
	"testing"
)

// TestCheckJSONRefusesDeepNesting: json.Decoder.Token slows down with depth, so a body of a
// megabyte of '[' under an unknown field (which no type stops early) must be refused at once,
// not walked.
func TestCheckJSONRefusesDeepNesting(t *testing.T) {
	body := []byte(`{"unknown":` + strings.Repeat("[", maxBody-20))
	err := checkJSON(body, reflect.TypeFor[*projectRequest]())
	if status, msg := statusOf(err); status != 400 || !strings.Contains(msg, "more than 32 deep") {
		t.Fatalf("got %d %q, want 400 about nesting", status, msg)
	}
	// The deepest request shape (resources[0].gpu.deserved) is well inside the bound.
	if err := checkJSON([]byte(`{"resources":[{"gpu":{"deserved":1}}]}`), reflect.TypeFor[*projectRequest]()); err != nil {
		t.Fatal(err)
	}
}
