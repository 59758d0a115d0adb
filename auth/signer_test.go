package auth

import "testing"

// One key signs several things; a signature made for one use never passes for another, nor
// under another key, and every replica with the key checks what another signed.
func TestSignerSeparatesUsesAndKeys(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	a, b := NewSigner(key), NewSigner(key)
	msg := []byte("message")
	sum := a.Sum("use one\x00", msg)
	cases := []struct {
		name  string
		check bool
		want  bool
	}{
		{"the same key and label, another replica", b.Verify(sum, "use one\x00", msg), true},
		{"another label", b.Verify(sum, "use two\x00", msg), false},
		{"another message", b.Verify(sum, "use one\x00", []byte("massage")), false},
		{"the parts split elsewhere are the same bytes", b.Verify(sum, "use one\x00", []byte("mess"), []byte("age")), true},
		{"another key", NewSigner([]byte("another key of thirty-two bytes!")).Verify(sum, "use one\x00", msg), false},
		{"a process key of its own", NewSigner(nil).Verify(sum, "use one\x00", msg), false},
	}
	for _, c := range cases {
		if c.check != c.want {
			t.Errorf("%s: verified %v, want %v", c.name, c.check, c.want)
		}
	}
}
