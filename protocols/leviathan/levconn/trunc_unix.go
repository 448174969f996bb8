//go:build unix

package levconn

import "syscall"

// msgTrunc is the recvmsg flag saying the datagram did not fit the buffer.
const msgTrunc = syscall.MSG_TRUNC
