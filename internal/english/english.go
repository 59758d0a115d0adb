// Package english holds the small pieces of English grammar the sentences Arbiter shows
// people are made of, so that each is written once.
package english

import "strconv"

// Plural is "1 GPU", "0 GPUs", "4 GPUs": n and the noun, with an s unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
