#include "base/knobs.h"

#include <unistd.h>  // environ (glibc, _GNU_SOURCE)

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "base/log.h"

namespace spccl {

// Every SPCCL_* variable, declared once. Keep sorted by area; the README's
// table is generated from `spccl_info --markdown`. Never destroyed: a
// detached thread of spccl's (a rendezvous root, core/bootstrap.cc) may
// read a knob while the process exits (the NCCL interposer's allocation
// sweep found one reading a destroyed list).
static const std::vector<KnobSpec>* const kKnobs = new std::vector<KnobSpec>{
    // logging
    {"SPCCL_DEBUG", "WARN", "Log level: NONE, WARN, INFO or TRACE"},
    {"SPCCL_DEBUG_SUBSYS", "ALL",
     "Subsystems to log: comma list of INIT,BOOTSTRAP,NET,COLL,ENV,TUNE,SPARSE,COMPRESS,MIGRATE; "
     "a leading ^ excludes"},
    {"SPCCL_DEBUG_FILE", "", "Write the log to this file instead of stderr (%h host, %p pid)"},
    {"SPCCL_FLIGHT_RECORDER", "64",
     "Collective calls each communicator remembers (the flight recorder), dumped as JSON to "
     "SPCCL_DEBUG_FILE or stderr on a timeout, spcclCommAbort, a fatal signal or spcclCommDump; "
     "0: off"},
    // launch and rendezvous
    {"SPCCL_RANK", "", "This process's rank (set by spcclrun; read by spcclCommInitFromEnv)"},
    {"SPCCL_NRANKS", "", "Number of ranks (set by spcclrun)"},
    {"SPCCL_LOCAL_RANK", "", "Rank among the ranks of this host (set by spcclrun)"},
    {"SPCCL_COMM_ID", "",
     "host:port of the rendezvous root for spcclCommInitFromEnv (rank 0 listens there)"},
    {"SPCCL_JOB_SECRET", "",
     "Job secret, 32 to 64 hex digits (128 to 256 bits), that keys every connection's handshake "
     "(never sent); prefer SPCCL_JOB_SECRET_FILE, since the environment of a process may be "
     "readable by others"},
    {"SPCCL_JOB_SECRET_FILE", "",
     "File holding the job secret as hex (mode 0600 or stricter); spcclrun draws one into a "
     "private temporary directory"},
    {"SPCCL_AUTH", "on",
     "on: spcclCommInitFromEnv requires a job secret; off: run without one (anyone who can "
     "reach the ports can join), logged as a WARN"},
    {"SPCCL_HANDSHAKE_TIMEOUT_MS", "2000",
     "Time an incoming connection has to authenticate before the rendezvous root or a listener "
     "drops it"},
    {"SPCCL_MAX_UNAUTH_PER_SOURCE", "16",
     "Unauthenticated connections held at once per source address; a further one evicts that "
     "source's oldest"},
    {"SPCCL_LISTEN_ANY", "0",
     "1: the rendezvous root of spcclCommInitFromEnv listens on every address (the wildcard) "
     "instead of the SPCCL_COMM_ID / MASTER_ADDR address only"},
    {"SPCCL_HOSTID", "",
     "Override the host identity (default: hostname, boot id and network namespace); ranks with "
     "the same host id may use shm"},
    // network
    {"SPCCL_TIMEOUT_MS", "60000", "Deadline of every wait, in milliseconds"},
    {"SPCCL_COMM_BLOCKING", "1",
     "0: communicator creation (InitRank, InitRankConfig, InitFromEnv, Split, Shrink) returns "
     "spcclInProgress at once and finishes on a background thread; poll "
     "spcclCommGetAsyncError (NCCL_COMM_BLOCKING; spcclConfig_t.blocking overrides it)"},
    {"SPCCL_TRANSPORT", "auto",
     "auto (shm for same-host peers, tcp otherwise), tcp, shm, cuda_ipc (one host: shm, and "
     "messages in CUDA device memory go peer to peer through CUDA IPC), or a plugin name "
     "(libspccl-net-NAME.so)"},
    {"SPCCL_SOCKET_IFNAME", "",
     "Interfaces to use, NCCL syntax: prefixes, ^ to exclude, = for exact names"},
    {"SPCCL_SOCKET_FAMILY", "", "AF_INET or AF_INET6 to force an address family"},
    {"SPCCL_SOCKET_BUFFER_BYTES", "4194304", "SO_SNDBUF/SO_RCVBUF of tcp connections"},
    {"SPCCL_TLS", "off",
     "Encryption of tcp connections: off, psk (TLS 1.3 with a key derived from the job secret) "
     "or cert (TLS 1.3 with SPCCL_TLS_CA, SPCCL_TLS_CERT and SPCCL_TLS_KEY; a peer's certificate "
     "must name its host)"},
    {"SPCCL_WIRE_CHECKSUM", "off",
     "crc32c: every data frame carries a CRC32C of its header and payload, checked by the "
     "receiver, so a frame altered between two ranks fails the call naming the peer instead of "
     "returning wrong data (about 0.1 ns per byte on each side); off: none (TCP's own checksum "
     "and, with SPCCL_TLS, TLS's authentication remain). Every rank must use the same value"},
    {"SPCCL_TLS_CA", "", "SPCCL_TLS=cert: PEM file of the CA that signs every rank's certificate"},
    {"SPCCL_TLS_CERT", "", "SPCCL_TLS=cert: PEM certificate (chain) of this host"},
    {"SPCCL_TLS_KEY", "", "SPCCL_TLS=cert: PEM private key of SPCCL_TLS_CERT"},
    {"SPCCL_SHM_INLINE_BYTES", "8192",
     "shm: messages up to this size are copied through the socket, larger ones are read "
     "directly from the sender's memory (process_vm_readv)"},
    {"SPCCL_IB_HCA", "",
     "ib plugin: RDMA devices/ports to use, NCCL_IB_HCA syntax (mlx5_0:1,mlx5_1; ^ to exclude, = "
     "for exact names)"},
    {"SPCCL_IB_GID_INDEX", "-1",
     "ib plugin, RoCE: GID index to use; -1 picks RoCE v2 with an IPv4-mapped address"},
    {"SPCCL_IB_MR_CACHE", "64",
     "ib plugin: memory registrations kept for reuse (0: register per message)"},
    {"SPCCL_IB_GDR", "1",
     "ib plugin: GPUDirect RDMA. 1: register GPU memory where detected (peer-memory module "
     "loaded: SPCCL_PTR_CUDA; HCA accepts dma-bufs: SPCCL_PTR_DMABUF); 0: host memory only"},
    {"SPCCL_TOPO_XML", "",
     "Read the host topology from this hwloc XML export instead of discovering it"},
    {"SPCCL_TOPO_NIC", "",
     "NIC(s) to use, by name (mlx5_0, eth0) or PCI bus id, comma-separated; overrides the "
     "topology-based choice"},
    {"SPCCL_TOPO_RAILS", "1",
     "How many devices (rails) a rank uses at once: tcp takes the first N interfaces "
     "SPCCL_SOCKET_IFNAME matches (give each rail its own subnet), ib the N closest ports"},
    {"SPCCL_NET_CONNS_PER_RAIL", "1",
     "Connections per rail to each peer (sockets for tcp, QPs for ib), 1..16; large messages are "
     "split across all of a peer's connections"},
    {"SPCCL_NET_STRIPE_MIN_BYTES", "262144",
     "Messages of at least this size are split across a peer's connections (rails x "
     "SPCCL_NET_CONNS_PER_RAIL); smaller ones go on the first"},
    // algorithms
    {"SPCCL_ALGO", "", "Force a dense algorithm by name (see spccl_info); empty: alpha-beta model"},
    {"SPCCL_CHUNK_BYTES", "1048576", "Slice size of pipelined algorithms"},
    {"SPCCL_SPARSE_PIECE_BYTES", "1048576",
     "The sparse schedules (hc, bp) cut a stage's message into pieces of about this many bytes, "
     "each a range of positions, so that merging one piece overlaps the transfer of the next "
     "(docs/algorithms.md); 0: one message per stage. Every rank must use the same value"},
    {"SPCCL_COMPRESS_PIECE_BYTES", "1048576",
     "The two-shot compressed all-reduce of f32 cuts each rank's owned chunk into pieces of "
     "about this many bytes of input and sends each piece's codes as soon as it is summed, so "
     "that the all-gather overlaps the owned sum (at most 32 pieces a chunk; same result bits); "
     "0: one message per chunk. Every rank must use the same value"},
    {"SPCCL_STAGING_REPORT", "0",
     "1: each rank prints, when a communicator ends, where its calls on device memory staged "
     "whole through pinned memory spent their time: copies in, the call on the host, copies out "
     "(docs/gpu.md)"},
    {"SPCCL_DEVICE_ALLREDUCE", "1",
     "1: a dense all-reduce, reduce-scatter, all-gather, broadcast or reduce of CUDA device "
     "buffers, every rank on one host (SPCCL_TRANSPORT auto, shm or cuda_ipc), runs on the GPUs "
     "through CUDA IPC with device copies and spccl's embedded kernels, nothing staged through "
     "host memory (docs/gpu.md; not yet run on a GPU); 0: staged as the other collectives, for "
     "comparison. Every rank must set it the same"},
    {"SPCCL_DEVICE_MAX_OPENED_PEER_BUFFERS", "256",
     "The device-resident collectives keep at most this many peers' buffers opened through CUDA "
     "IPC per communicator (at least 1); past it the least recently used is closed once the work "
     "queued before on spccl's stream has run, never one the running call uses (docs/gpu.md)"},
    {"SPCCL_DEVICE_SPARSE", "1",
     "1: a sparse all-reduce of dense CUDA device buffers finds its non-zeros on the GPU with "
     "spccl's embedded kernels and copies only those (index, value) pairs to the host, and only "
     "the result's pairs back (docs/gpu.md; not yet run on a GPU); 0: the whole input and output "
     "staged through pinned memory, for comparison. A rank's own choice: the results are the "
     "same bits either way"},
    {"SPCCL_DEVICE_SPARSE_INDEX_BYTES", "0",
     "For tests: 8 makes the device sparse all-reduce's (index, value) pairs use 64-bit indices "
     "at any count; otherwise 32-bit where the count allows (at most 2^32 elements), 64-bit past "
     "it (docs/gpu.md)"},
    {"SPCCL_DEVICE_TOKENS", "1",
     "1: a token top-k or mask all-reduce of a CUDA device tensor copies only the scores "
     "or the mask to the host, gathers the kept rows on the GPU with spccl's embedded kernels and "
     "copies only those to the host and back (docs/gpu.md; not yet run on a GPU); 0: the whole "
     "tensor staged through pinned memory, for comparison. A rank's own choice: the results are "
     "the same bits either way"},
    {"SPCCL_DEVICE_CODECS", "1",
     "1: a compressed all-reduce (f32, f16 or bf16; either schedule; no residual or one in device "
     "memory) of CUDA device buffers encodes, sums and decodes on the GPU with spccl's embedded "
     "kernels, so only codes cross PCIe (docs/gpu.md; not yet run on a GPU); 0: input and "
     "output staged whole through pinned memory. A rank's own choice: the results are the same "
     "bits either way"},
    {"SPCCL_STAGING_CHUNK_BYTES", "0",
     "All-reduce, broadcast, reduce, all-gather and reduce-scatter calls whose per-rank block is "
     "larger run in pieces of this many bytes per block, so that copying device buffers through "
     "pinned memory overlaps the transfers (docs/gpu.md); every rank cuts the same way, whatever "
     "its memory. 0 (the default): never cut; on host memory 8 MiB pieces cost 10-30 % at 64 "
     "MiB, and on an H100 shared by 2 ranks 4 MiB pieces were faster in 1 case of 6 "
     "(docs/perf/gpu.md). Every rank must set it the same (checked when a "
     "communicator is created)"},
    {"SPCCL_SPARSE_MEASURED_TIMES", "0",
     "1: sparse auto also weighs each algorithm's measured call times (CPU included), when every "
     "rank sets it; faster where CPU dominates, but the choice, hence float rounding, can then "
     "differ from run to run"},
    {"SPCCL_SPARSE_CPU_NS_PER_PAIR", "3",
     "Sparse auto's CPU term: ns per pair of merge work on one idle core (spccl_info times this "
     "machine's), scaled by the ranks sharing each core; 0: links only (the paper's model)"},
    {"SPCCL_CHECK_ROOTS", "1",
     "1: rooted calls (broadcast, reduce, scatter, gather, migrate broadcast and reduce) first "
     "check that every rank passed the same root, so a disagreement fails on every rank at once "
     "instead of hanging until SPCCL_TIMEOUT_MS or returning success with wrong data on some "
     "ranks; costs ceil(log2 n) rounds of 16-byte messages per call. "
     "Every rank must set it the same (checked when a communicator is created)"},
    {"SPCCL_PROFILE_LINKS", "1",
     "Measure latency and bandwidth of the links at communicator creation (0: use defaults)"},
    // MPI interposer (interpose/mpi, docs/mpi-interposer.md)
    {"SPCCL_INTERPOSE", "auto",
     "Which MPI_Allreduce calls libspccl_mpi_interpose.so sends to spccl: off, dense (spccl's "
     "dense all-reduce), sparse (spccl's sparse all-reduce, any size) or auto (sparse from "
     "SPCCL_INTERPOSE_MIN_BYTES on)"},
    {"SPCCL_INTERPOSE_MIN_BYTES", "65536",
     "auto: MPI_Allreduce calls smaller than this stay on MPI; NCCL interposer: ncclAllReduce "
     "calls smaller than this take neither the sparse nor the compressed path"},
    {"SPCCL_INTERPOSE_REPORT", "0",
     "1: at MPI_Finalize, rank 0 prints the interposer's calls, bytes and time per path; NCCL "
     "interposer: every rank prints its communicator's calls, bytes, paths and time at "
     "ncclCommDestroy"},
    // NCCL interposer (interpose/nccl, docs/nccl-interposer.md)
    {"SPCCL_NCCL_MODE", "forward",
     "libspccl_nccl.so: forward (every NCCL communicator is also one of the real NCCL, which gets "
     "every call spccl does not take) or replace (spccl serves every call, host buffers)"},
    {"SPCCL_NCCL_LIB", "",
     "forward mode: the real NCCL to load (a path or a library name); empty: libnccl.so.2 from "
     "the library search path, skipping libspccl_nccl.so itself"},
    {"SPCCL_NCCL_SPARSE", "1",
     "1: ncclAllReduce of a float type with sum or avg, from SPCCL_INTERPOSE_MIN_BYTES on, goes "
     "to spccl's sparse all-reduce (lossless; its planner runs the dense ring when the data is "
     "not sparse); 0: such calls stay dense (spccl's in replace mode, NCCL's in forward mode)"},
    {"SPCCL_NCCL_COMPRESS", "off",
     "Lossy, opt-in: CODEC:BITS[:SCHEDULE[:BLOCK]] (e.g. piecewise:4, linear:8:ring) sends "
     "ncclAllReduce of f32, f16 or bf16 with sum or avg, from SPCCL_INTERPOSE_MIN_BYTES on, to "
     "spcclCompressedAllReduce; off: never. Set it the same on every rank"},
    {"SPCCL_NCCL_DEVICE_DENSITY", "0",
     "Forward mode, device buffers: an ncclAllReduce the sparse path would take goes to spccl's "
     "sparse all-reduce (staged through host memory) when the ranks' mean nonzero fraction, "
     "sampled from the send buffers and agreed by all, is at most this (e.g. 0.05); 0: device "
     "all-reduces stay on the real NCCL. The sample costs a stream synchronisation and a small "
     "exchange per eligible call. Set it the same on every rank"},
};

const std::vector<KnobSpec>& allKnobs() { return *kKnobs; }

static const KnobSpec* findKnob(const char* name) {
  for (const KnobSpec& knob : *kKnobs)
    if (std::strcmp(knob.name, name) == 0) return &knob;
  return nullptr;
}

std::string knobString(const char* name) {
  const KnobSpec* knob = findKnob(name);
  if (knob == nullptr) {
    SPCCL_WARN("internal: knob %s is not declared in knobs.cc", name);
    const char* value = std::getenv(name);
    return value ? value : "";
  }
  const char* value = std::getenv(name);
  if (value != nullptr && value[0] != '\0') return value;
  return knob->defaultValue;
}

int64_t knobInt(const char* name) {
  std::string text = knobString(name);
  if (text.empty()) return 0;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 0);
  if (end == nullptr || *end != '\0') {
    const KnobSpec* knob = findKnob(name);
    SPCCL_WARN("%s=%s is not an integer; using the default %s", name, text.c_str(),
               knob ? knob->defaultValue : "0");
    return knob ? std::strtoll(knob->defaultValue, nullptr, 0) : 0;
  }
  return value;
}

void knobsEchoOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (char** env = environ; env != nullptr && *env != nullptr; ++env) {
      if (std::strncmp(*env, "SPCCL_", 6) != 0) continue;
      std::string entry(*env);
      size_t eq = entry.find('=');
      std::string name = entry.substr(0, eq);
      std::string value = eq == std::string::npos ? "" : entry.substr(eq + 1);
      if (findKnob(name.c_str()) == nullptr) {
        SPCCL_WARN("%s is set but is not an spccl variable (see spccl_info)", name.c_str());
        continue;
      }
      SPCCL_INFO(kLogEnv, "%s set by environment to %s", name.c_str(), value.c_str());
    }
  });
}

}  // namespace spccl
