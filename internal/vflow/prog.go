//go:build linux

package vflow

import (
	"encoding/binary"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// Offsets in struct bpf_sk_lookup (linux/bpf.h), the program's context.
const (
	offFamily    = 8
	offProtocol  = 12
	offLocalIP4  = 40 // network byte order
	offLocalPort = 60 // host byte order
)

const skPass = 1 // SK_PASS: go on with the lookup (assigned or not)

// program builds the sk_lookup program of cfg: a UDP/IPv4 datagram whose
// destination lies in cfg's range goes to the socket in sockmap at key
// (address + port) mod cfg.Sockets, the address as a number: flows given
// out in order (addresses first: Table) take the sockets in turn, and a
// flow's datagrams, and the kernel's errors for its own, always reach the
// same one. Every other lookup goes on untouched.
func program(cfg Config, sockmap *ebpf.Map) *ebpf.ProgramSpec {
	// local_ip4 holds the address's bytes in network order; a 32-bit load
	// reads them in the host's order, and so are base and mask read.
	base := cfg.Addrs.Addr().As4()
	var mask [4]byte
	binary.BigEndian.PutUint32(mask[:], ^uint32(0)<<(32-cfg.Addrs.Bits()))
	ins := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R2, asm.R6, offFamily, asm.Word),
		asm.JNE.Imm(asm.R2, unix.AF_INET, "pass"),
		asm.LoadMem(asm.R2, asm.R6, offProtocol, asm.Word),
		asm.JNE.Imm(asm.R2, unix.IPPROTO_UDP, "pass"),
		asm.LoadMem(asm.R8, asm.R6, offLocalPort, asm.Word),
		asm.JLT.Imm(asm.R8, int32(cfg.Ports.First), "pass"),
		asm.JGT.Imm(asm.R8, int32(cfg.Ports.Last), "pass"),
		asm.LoadMem(asm.R9, asm.R6, offLocalIP4, asm.Word),
		asm.Mov.Reg(asm.R2, asm.R9),
		asm.And.Imm32(asm.R2, int32(binary.NativeEndian.Uint32(mask[:]))),
		asm.JNE.Imm32(asm.R2, int32(binary.NativeEndian.Uint32(base[:])), "pass"),
		// key = (address + port) mod sockets, on the stack
		asm.HostTo(asm.BE, asm.R9, asm.Word),
		asm.Add.Reg32(asm.R9, asm.R8),
		asm.Mod.Imm32(asm.R9, int32(cfg.Sockets)),
		asm.StoreMem(asm.RFP, -4, asm.R9, asm.Word),
		// sk = bpf_map_lookup_elem(sockmap, &key)
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.LoadMapPtr(asm.R1, sockmap.FD()),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "pass"),
		// bpf_sk_assign(ctx, sk, 0); bpf_sk_release(sk)
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnSkAssign.Call(),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.FnSkRelease.Call(),
		asm.Mov.Imm(asm.R0, skPass).WithSymbol("pass"),
		asm.Return(),
	}
	return &ebpf.ProgramSpec{
		Name:         "vflow_steer",
		Type:         ebpf.SkLookup,
		AttachType:   ebpf.AttachSkLookup,
		Instructions: ins,
		License:      "Dual MIT/GPL",
	}
}
