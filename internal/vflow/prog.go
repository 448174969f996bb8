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
// destination lies in cfg's range goes to the one socket in sockmap (key
// 0); every other lookup goes on untouched.
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
		asm.LoadMem(asm.R2, asm.R6, offLocalPort, asm.Word),
		asm.JLT.Imm(asm.R2, int32(cfg.Ports.First), "pass"),
		asm.JGT.Imm(asm.R2, int32(cfg.Ports.Last), "pass"),
		asm.LoadMem(asm.R2, asm.R6, offLocalIP4, asm.Word),
		asm.And.Imm32(asm.R2, int32(binary.NativeEndian.Uint32(mask[:]))),
		asm.JNE.Imm32(asm.R2, int32(binary.NativeEndian.Uint32(base[:])), "pass"),
		// sk = bpf_map_lookup_elem(sockmap, &key) with key 0 on the stack
		asm.StoreImm(asm.RFP, -4, 0, asm.Word),
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
