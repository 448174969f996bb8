package words

import (
	"fmt"
	"strings"
)

// integer is what a count can be.
type integer interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64
}

// Count is n followed by noun, plural unless n is 1: "1 warning",
// "3 warnings", "2 source addresses". Every count a report or a command
// says in words goes through it (or Plural, for "1 of 3 cases"), so no
// output says "1 warnings" or "shard(s)".
func Count[N integer](n N, noun string) string {
	return fmt.Sprintf("%d %s", n, Plural(n, noun))
}

// Plural is noun, made plural unless n is 1. Only the last word changes
// ("wire log entry" → "wire log entries"); nouns that do not count
// ("info") are best left out of it.
func Plural[N integer](n N, noun string) string {
	if n == 1 {
		return noun
	}
	switch {
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ay") && !strings.HasSuffix(noun, "ey") && !strings.HasSuffix(noun, "oy"):
		return strings.TrimSuffix(noun, "y") + "ies"
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		return noun + "es"
	}
	return noun + "s"
}

// Agree is one when n is 1, many otherwise: the verb or pronoun that goes
// with a count ("1 session could not open its socket").
func Agree[N integer](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
