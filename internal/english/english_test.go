package english

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 GPUs", 1: "1 GPU", 2: "2 GPUs", -1: "-1 GPUs"} {
		if got := Plural(n, "GPU"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestAgree(t *testing.T) {
	for n, want := range map[int]string{0: "have", 1: "has", 2: "have"} {
		if got := Agree(n, "has", "have"); got != want {
			t.Errorf("Agree(%d) = %q, want %q", n, got, want)
		}
	}
}
