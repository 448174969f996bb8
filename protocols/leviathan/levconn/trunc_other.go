//go:build !unix

package levconn

// msgTrunc is unknown here: a full buffer is taken as truncation.
const msgTrunc = 0
