#!/usr/bin/env python3
"""Writes the seed corpus of every harness (tests/fuzz/corpus/NAME/): small
valid inputs in each harness's input layout (the comment at the top of
tests/fuzz/fuzz_NAME.cc), built here the way the library encodes them.
Deterministic; rerun after changing a layout:  python3 tests/fuzz/make_corpus.py
"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

# sizeof(RankInfo) on x86-64 (src/core/bootstrap.h), the hello's infoBytes.
RANK_INFO_BYTES = 2080
FRAME_MAGIC, FRAME_VERSION = 0x46435053, 1
UNIQUE_ID_MAGIC, UNIQUE_ID_VERSION, HANDSHAKE_VERSION = 0x44495053, 2, 2
UCX_ADDRESS_MAGIC = 0x53505558


def frame_header(kind=1, comm=0x1234, seq=7, step=0, coll=1, dtype=7, op=0, root=-1, src=1,
                 count=16, length=64, result=0):
    return struct.pack("<IHHQQIBBBBiiQQII", FRAME_MAGIC, FRAME_VERSION, kind, comm, seq, step,
                       coll, dtype, op, 0, root, src, count, length, result, 0)


def expectation(comm=0x1234, seq=7, step=0, src=1, coll=1, dtype=7, op=0, root=-1, count=16,
                capacity=64):
    return struct.pack("<QQIiBBBiQI", comm, seq, step, src, coll, dtype, op, root, count, capacity)


def frame():
    seeds = {
        "data": expectation() + frame_header(),
        "data_oversize": expectation(capacity=8) + frame_header(length=64),
        "data_mismatch": expectation(count=32) + frame_header(),
        "abort": expectation() + frame_header(kind=2, length=11, result=3) + b"rank 1: oom",
        "withdraw": expectation() + frame_header(kind=5, length=4, result=4) + b"bad!",
        "hello": expectation() + frame_header(kind=3, step=0xffffffff, length=0),
        "close": expectation() + frame_header(kind=4, length=0),
        "migration": expectation(coll=13, op=2 * 16 + 1) + frame_header(coll=13, op=2 * 16 + 1),
    }
    return seeds


def handshake():
    hello = frame_header(kind=3, comm=0x1234567890abcdef, step=0, src=1, length=0)
    lane = lambda rank, nranks, lanes, taken, sign: (
        bytes([0, nranks - 2, rank, lanes - 1]) + struct.pack("<I", taken) + bytes([sign]) +
        bytes(range(32)) + bytes(range(32, 64)))
    client = struct.pack("<IIiiIIQ", UNIQUE_ID_MAGIC, HANDSHAKE_VERSION, 1, 4, RANK_INFO_BYTES, 0,
                         0x42) + bytes(32)
    return {
        "lane_signed": lane(0, 2, 1, 0, 1) + hello + bytes(64),
        "lane_control": lane(0, 4, 2, 0, 1) +
                        frame_header(kind=3, comm=0x1234567890abcdef, step=0xffffffff, src=3,
                                     length=0) + bytes(64),
        "lane_taken": lane(0, 2, 1, 1, 1) + hello + bytes(64),
        "lane_unsigned": lane(0, 2, 1, 0, 0) + hello + bytes(64),
        "client_hello": bytes([1]) + struct.pack("<Q", 0x42) + client,
        "secret_hex": bytes([2]) + b"00112233445566778899aabbccddeeff" * 2,
        "secret_short": bytes([2]) + b"0x00112233445566778899aabbccddeeff\n",
    }


def unique_id():
    def uid(family, addr, port, secret, comm):
        root = bytearray(28)
        struct.pack_into("<H", root, 0, family)
        struct.pack_into(">H", root, 2, port)
        if family == 2:
            root[4:4 + len(addr)] = addr
        else:
            root[8:8 + len(addr)] = addr
        body = struct.pack("<II", UNIQUE_ID_MAGIC, UNIQUE_ID_VERSION) + bytes(root)
        body += secret.ljust(32, b"\0") + struct.pack("<I", len(secret))
        body += struct.pack("<Q", comm)
        return body.ljust(128, b"\0")
    return {
        "ipv4": uid(2, bytes([127, 0, 0, 1]), 29500, bytes(range(32)), 0x99),
        "ipv6": uid(10, bytes(15) + b"\1", 29500, bytes(range(16)), 0x98),
        "no_secret": uid(2, bytes([10, 0, 0, 1]), 1, b"", 1),
    }


def sparse_message(encoding, nnz, universe, body):
    return struct.pack("<BQQ", encoding, nnz, universe) + body


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def sparse():
    positions, universe = [0, 3, 4, 17, 63], 64
    values = b"".join(struct.pack("<f", 1.5 + i) for i in range(len(positions)))
    coo = b"".join(struct.pack("<I", p) for p in positions)
    bitmap = bytearray((universe + 7) // 8)
    for p in positions:
        bitmap[p // 8] |= 1 << (p % 8)
    packed = b"".join(varint(p if i == 0 else p - positions[i - 1] - 1)
                      for i, p in enumerate(positions))
    dense = bytearray(universe * 4)
    for p, i in zip(positions, range(len(positions))):
        dense[p * 4:p * 4 + 4] = values[i * 4:i * 4 + 4]
    mode = 1 | (2 << 1) | (0xf << 3)  # universe from the message, 4-byte values, all allowed
    seeds = {
        "coo": sparse_message(1, 5, universe, coo + values),
        "bitmap": sparse_message(2, 5, universe, bytes(bitmap) + values),
        "packed": sparse_message(3, 5, universe, packed + values),
        "dense": sparse_message(4, 5, universe, bytes(dense)),
        "coo_u64": sparse_message(1, 2, 1 << 33, struct.pack("<QQ", 5, (1 << 33) - 1) +
                                  values[:8]),
        "empty": sparse_message(3, 0, universe, b""),
    }
    return {k: struct.pack("<QB", 0, mode) + v for k, v in seeds.items()}


def compress():
    def block(codec, bits, block_size, count, type_index, scales, codes):
        head = struct.pack("<BBHHB", codec, bits - 2, block_size - 1, count, type_index)
        return head + b"".join(struct.pack("<f", s) for s in scales) + codes
    return {
        "piecewise4_f32": block(0, 4, 8, 16, 0, [1.0, 2.5], bytes(range(0x10, 0x18))),
        "linear8_f16": block(1, 8, 4, 8, 1, [0.5, 3.0], bytes(range(0x70, 0x78))),
        "bits2_bf16": block(0, 2, 3, 7, 2, [1.0, -1.0, 4.0], b"\x1b\x2c"),
        "nan_scale": block(1, 5, 2, 4, 0, [float("nan"), float("inf")], b"\xff\x01\x80"),
    }


def token_mask():
    scores = b"".join(struct.pack("<f", s) for s in
                      [0.5, float("nan"), 2.0, -0.0, 0.0, 2.0, float("inf"), -1.0])
    return {
        "mask_zero": struct.pack("<HBBH", 8, 8, 0, 0) + bytes([1, 0, 0, 2, 0, 255, 1, 0]),
        "mask_keep_local": struct.pack("<HBBH", 6, 3, 1, 0) + bytes([0, 1, 1, 0, 0, 1]),
        "topk": struct.pack("<HBBH", 8, 4, 0x80, 3) + scores,
        "topk_all": struct.pack("<HBBH", 8, 4, 0x80, 8) + scores,
    }


def npy_file(descr, shape, data, version=1):
    shape_text = "(" + "".join(f"{s}, " for s in shape) + ")"
    if len(shape) == 1:
        shape_text = f"({shape[0]},)"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    length_bytes = 2 if version == 1 else 4
    while (8 + length_bytes + len(header) + 1) % 64:
        header += " "
    header += "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode() + data


def npy():
    return {
        "f4_vector": npy_file("<f4", [4], struct.pack("<4f", 1, 0, -2, 3.5)),
        "i8_matrix": npy_file("<i8", [2, 2], struct.pack("<4q", 1, 2, 3, 4)),
        "u1_scalar": npy_file("|u1", [], b"\x07"),
        "f2_v2": npy_file("<f2", [3], struct.pack("<3e", 1, 2, 3), version=2),
    }


def knobs():
    return {
        "env_spccl": b"\x00SPCCL_RANK=1\nSPCCL_NRANKS=4\nSPCCL_COMM_ID=10.0.0.1:29500\n"
                     b"SPCCL_JOB_SECRET=" + b"ab" * 32,
        "env_torchrun": b"\x00RANK=0\nWORLD_SIZE=2\nLOCAL_RANK=0\nMASTER_ADDR=[fe80::1]\n"
                        b"MASTER_PORT=29500\nSPCCL_AUTH=off",
        "env_slurm": b"\x00SLURM_PROCID=3\nSLURM_NTASKS=8\nSLURM_LOCALID=1\nSLURM_JOB_ID=1234\n"
                     b"SLURM_STEP_ID=2\nSLURM_STEP_NODELIST=rack[1-2]-n[01-04],gpu3\n"
                     b"SLURMD_NODENAME=rack1-n02\nSLURM_STEP_RESV_PORTS=12000-12015\nSPCCL_AUTH=off",
        "hostport_v4": b"\x01127.0.0.1:29500",
        "hostport_v6": b"\x01[::1]:80",
        "hostport_name": b"\x01node-7:1234",
        "ifname": b"\x02^=eth0, ib ,docker",
        "family": b"\x02AF_INET6",
        "knob_int": b"\x03" + b"0x40",
        "knob_text": b"\x08" + b"ring",
        "enums": b"\x04" + struct.pack("<ii", 7, 2),
    }


def side_channel():
    address = bytes(range(40))
    answer = struct.pack("<IIQ", UCX_ADDRESS_MAGIC, len(address), 0x77) + address
    return {
        "answer": bytes([255]) + answer,
        "answer_bytewise": bytes([0]) + answer,
        "short": bytes([3]) + answer[:20],
        "bad_magic": bytes([15]) + struct.pack("<IIQ", 0x1234, 4, 0) + b"abcd",
    }


def tcp_stream():
    def msg(payload):
        return struct.pack("<Q", len(payload)) + payload
    def caps(*c):
        return bytes([len(c) - 1]) + b"".join(struct.pack("<H", x) for x in c)
    return {
        "two": caps(16, 8) + msg(b"hello") + msg(b""),
        "exact": caps(4, 4, 4) + msg(b"abcd") + msg(b"efgh") + msg(b"ijkl"),
        "oversize": caps(4) + msg(b"too long"),
        "truncated": caps(64) + struct.pack("<Q", 32) + b"short",
    }


def shm_stream():
    hello = struct.pack("<Ii", 0x5350534D, 1234)
    def inline(payload):
        return struct.pack("<QB", len(payload), 1) + payload
    def remote(payload, address=0x7f0000001000):
        return struct.pack("<QBQ", len(payload), 2, address) + payload
    def caps(*c):
        return bytes([len(c) - 1]) + b"".join(struct.pack("<H", x) for x in c)
    return {
        "inline": caps(16, 8) + hello + inline(b"hello") + inline(b""),
        "remote_refused": caps(32, 32) + hello + remote(b"streamed after kNak") + inline(b"x"),
        "bad_hello": caps(4) + struct.pack("<Ii", 0x1234, 1) + inline(b"abcd"),
        "bad_mode": caps(4) + hello + struct.pack("<QB", 1, 3) + b"z",
        "oversize": caps(2) + hello + inline(b"abc"),
    }


def sparse_call():
    # SparseCallHeader on x86-64 (src/sparse/call_agreement.h): 456 bytes.
    def header(nnz, hashes, stages=0, gammas=(), last_algorithm=-1, last_seconds=0.0):
        h = struct.pack("<QQiiii", nnz, 7, 0, 0, 0, 1)
        h += struct.pack("<Q", len(hashes)) + b"".join(
            struct.pack("<Q", x) for x in hashes).ljust(32 * 8, b"\0")
        h += struct.pack("<ii", stages, 0)
        h += b"".join(struct.pack("<d", g) for g in gammas).ljust(16 * 8, b"\0")
        h += struct.pack("<iidi", last_algorithm, 0, last_seconds, 0) + bytes(4)
        assert len(h) == 456, len(h)
        return h
    full = [i * 0x0400000000000000 + 5 for i in range(32)]
    return {
        "small_sets": bytes([1]) + struct.pack("<d", 0.01) + header(3, [10, 20, 30]) +
                      header(2, [20, 40]),
        "full_sketches": bytes([2]) + struct.pack("<d", 0.2) + header(1000, full) +
                         header(900, [x + 1 for x in full]) + header(800, full),
        "stages": bytes([1]) + struct.pack("<d", 0.05) +
                  header(10, [1], 3, (0.5, 0.75, 1.0), 1, 0.002) +
                  header(12, [2], 2, (0.4, 0.6), 1, 0.003),
    }


def rank_table():
    # RankInfo on x86-64 (src/core/bootstrap.h): 2080 bytes, JobSettings at 88.
    def info(rank, nranks, transport=b"tcp", algorithm=b"", chunk=1 << 20, stripe=256 << 10):
        r = bytearray(RANK_INFO_BYTES)
        struct.pack_into("<iii", r, 0, rank, nranks, 1000 + rank)
        r[24:24 + 6] = b"node%d" % rank + b"\0"
        job = transport.ljust(32, b"\0") + algorithm.ljust(64, b"\0")
        # chunk, staging pieces, stripe, sparse pieces, two-shot pieces, device
        # all-reduce, root checks (job_settings.h)
        job += struct.pack("<QQQQQii", chunk, 0, stripe, 1 << 20, 1 << 20, 1, 1)
        r[88:88 + len(job)] = job
        return bytes(r)
    # The last entry stops after its settings (the harness zero-fills it).
    last = lambda *a, **k: info(*a, **k)[:200]
    return {
        "agree": bytes([1, 0]) + info(0, 2) + last(1, 2),
        "algorithm_differs": bytes([1, 1]) + info(0, 2, algorithm=b"ring") + last(1, 2),
        "chunk_differs": bytes([1, 1]) + info(0, 2) + last(1, 2, chunk=4096),
    }


def main():
    makers = {"frame": frame, "handshake": handshake, "unique_id": unique_id, "sparse": sparse,
              "compress": compress, "token_mask": token_mask, "npy": npy, "knobs": knobs,
              "side_channel": side_channel, "tcp_stream": tcp_stream,
              "shm_stream": shm_stream, "sparse_call": sparse_call,
              "rank_table": rank_table}
    for name, make in makers.items():
        folder = os.path.join(CORPUS, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        for seed, data in make().items():
            with open(os.path.join(folder, seed), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
