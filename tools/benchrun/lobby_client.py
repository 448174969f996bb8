#!/usr/bin/env python3
"""A Python asyncio UDP lobby client for `make bench-run`.

Usage: lobby_client.py HOST:PORT CLIENTS SECONDS

CLIENTS datagram endpoints, each sending LOBBY_LIST_ROOMS (spec header,
CRC-32) back to back, one in flight, 100 ms to give up on a lost one, and
counting replies (LOBBY_ROOM_LIST with its sequence id). Prints the number
of replies on stdout. Loopback use only; bounded by SECONDS.
"""
import asyncio
import struct
import sys
import time
import zlib

REQUEST, LIST_ROOMS, ROOM_LIST = 0x01, 0x40, 0x41


def list_rooms(seq):
    head = struct.pack(">BBHHH", REQUEST, LIST_ROOMS, seq, 0, 0)
    return head + struct.pack(">I", zlib.crc32(head))


class Client(asyncio.DatagramProtocol):
    def __init__(self):
        self.waiter = None

    def datagram_received(self, data, addr):
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(data)


async def one(loop, host, port, deadline, counts):
    transport, proto = await loop.create_datagram_endpoint(Client, remote_addr=(host, port))
    ok, seq = 0, 0
    try:
        while time.monotonic() < deadline:
            seq = (seq + 1) & 0xFFFF
            proto.waiter = loop.create_future()
            transport.sendto(list_rooms(seq))
            try:
                data = await asyncio.wait_for(proto.waiter, 0.1)
            except asyncio.TimeoutError:
                continue
            if len(data) >= 4 and data[1] == ROOM_LIST and struct.unpack(">H", data[2:4])[0] == seq:
                ok += 1
    finally:
        transport.close()
    counts.append(ok)


async def main():
    host, port = sys.argv[1].rsplit(":", 1)
    clients, seconds = int(sys.argv[2]), float(sys.argv[3])
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + seconds
    counts = []
    await asyncio.gather(*(one(loop, host, int(port), deadline, counts) for _ in range(clients)))
    print(sum(counts))


if __name__ == "__main__":
    asyncio.run(main())
