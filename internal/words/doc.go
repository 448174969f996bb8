// Package words says lobbybench's figures and counts in words, the same
// way in the result model's own sentences (package result: headlines,
// reasons, comparisons) and in every format that renders them (package
// reports): latencies ("12.35ms"), shares ("1.25%"), bytes, and counts
// with their plural ("1 warning", "3 cases"). It imports nothing of the
// module.
package words
