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

// Agree is one when n is 1 and many otherwise: the word that agrees with a count ("1 workload
// has", "2 workloads have").
func Agree(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
