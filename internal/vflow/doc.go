// Package vflow is the foundation of virtual flows: many simulated UDP
// clients, each an address:port of a reserved range, without a kernel socket
// each. A flow is a row in the caller's table, not a file descriptor.
//
// A few descriptors carry every flow:
//
//   - Replies: a BPF sk_lookup program (Linux 5.9 or later), attached to the
//     process's network namespace, hands every UDP datagram addressed to the
//     range (destination address in Config.Addrs and destination port in
//     Config.Ports) to an ordinary UDP socket held in a SOCKMAP: one of
//     Config.Sockets, chosen by the flow's address and port, so that each
//     flow's datagrams always reach the same one and the flows share them
//     out (one reader each: the replies are read on several cores). On
//     such a socket IP_ORIGDSTADDR says which address:port, which flow, a
//     datagram was for, and SO_TIMESTAMPNS when the kernel received it
//     (Receiver). Without the program every reply to an unbound port would
//     draw an ICMP port unreachable.
//   - Requests: a raw IPv4 socket (IPPROTO_RAW) sends datagrams from any
//     address:port, the IPv4 and UDP headers written here, in batches with
//     sendmmsg (Sender).
//
// The program is attached through a BPF link held only by this process's
// descriptor and never pinned: when the process ends, even by SIGKILL, the
// kernel closes the descriptor and the steering goes with it.
//
// Several users of vflow on one machine (several lobbybench processes) share
// the network namespace's sk_lookup hook. Each program steers only its own
// range, so each must take a range no other uses. A Config without Addrs
// takes the first /16 block from 127.77.0.0/16 on whose first address:port
// it can bind (Open): users that leave the range to vflow land on disjoint
// blocks. A range given by hand is the giver's to keep apart: overlapping
// ranges steal each other's replies (the first program attached wins the
// datagrams of the overlap).
//
// Everything needs CAP_NET_RAW (the raw socket), CAP_BPF (maps and the
// program) and CAP_NET_ADMIN (loading a networking program, attaching it to
// the namespace); Available says which one is missing and how to grant it.
package vflow
