//! NCCL's connection buffers: device memory a multi-GPU run holds outside
//! PyTorch's caching allocator (NCCL allocates them itself, with
//! `cudaMalloc` or `cuMemCreate`, `src/include/alloc.h`), so they count in
//! what nvidia-smi shows and in no `torch.cuda` statistic.
//!
//! Each connection between two GPUs of one node (the P2P transport,
//! `src/transport/p2p.cc`) has a FIFO per protocol on the receiving side:
//! LL, `NCCL_LL_LINES_PER_THREAD × NCCL_LL_MAX_NTHREADS × NCCL_STEPS ×
//! sizeof(ncclLLFifoLine)` = 8 × 512 × 8 × 16 B = 512 KiB; LL128,
//! `NCCL_LL128_ELEMS_PER_THREAD × NCCL_LL128_MAX_NTHREADS × NCCL_STEPS × 8`
//! = 120 × 640 × 8 × 8 B = 4.6875 MiB; Simple, `DEFAULT_BUFFSIZE` = 4 MiB
//! (`src/init.cc`, `src/include/device.h`). `p2pRecvSetup` adds them to the
//! 4 KiB `ncclRecvMem` header and `p2pSendSetup` sizes the sender's
//! `ncclSendMem` (4 KiB), each rounded up to `CUDA_IPC_MIN` (2 MiB,
//! `src/include/comm.h`). In P2P read mode (NCCL's default between Ampere
//! GPUs over NVLink) the Simple FIFO moves from the receiver to the sender.
//! NCCL 2.30.7 (NVIDIA/nccl at 5067397c); values as of that source.
//!
//! Connections are made per channel and per peer the collectives use, at
//! their first use (`NCCL_RUNTIME_CONNECT`, on by default): a ring connects
//! each GPU to one sender and one receiver per channel; all-to-all and
//! send/recv to every peer, with "p2p channels per peer" each. The channel
//! counts come from NCCL's topology search and are printed in its INFO log
//! ("16 coll channels, ... 16 p2p channels per peer"), not derived here.

use crate::parallel::{Parallel, Strategy};
use crate::units::{Bytes, MIB};
use serde::Serialize;

/// `NCCL_STEPS`: slots in each FIFO.
const STEPS: u64 = 8;
/// LL FIFO: `NCCL_LL_LINES_PER_THREAD × NCCL_LL_MAX_NTHREADS × NCCL_STEPS × 16 B`.
pub const LL_FIFO: u64 = 8 * 512 * STEPS * 16;
/// LL128 FIFO: `NCCL_LL128_ELEMS_PER_THREAD × NCCL_LL128_MAX_NTHREADS × NCCL_STEPS × 8 B`.
pub const LL128_FIFO: u64 = 120 * 640 * STEPS * 8;
/// Simple FIFO: `DEFAULT_BUFFSIZE`, 4 MiB (`NCCL_BUFFSIZE` changes it).
pub const SIMPLE_FIFO: u64 = 4 * MIB;
/// `ncclSendMem` and `ncclRecvMem`: unions padded to `MEM_ALIGN`, 4 KiB.
const HEADER: u64 = 4096;
/// `CUDA_IPC_MIN`: each side's buffer is rounded up to it.
const CUDA_IPC_MIN: u64 = 2 * MIB;

/// How a P2P connection moves the Simple protocol's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum P2pMode {
    /// The sender writes into the receiver's FIFOs (the default).
    Write,
    /// The receiver reads from the sender's Simple FIFO (NCCL's default
    /// between Ampere GPUs over NVLink, `p2pGetInfo`).
    Read,
}

fn round_up(n: u64, to: u64) -> u64 {
    n.div_ceil(to) * to
}

/// One P2P connection's buffers with `simple` bytes of Simple FIFO:
/// `(sender's, receiver's)`, as `p2pSendSetup` / `p2pRecvSetup` size them.
pub fn p2p_connection(mode: P2pMode, simple: u64) -> (Bytes, Bytes) {
    let (send, recv) = match mode {
        P2pMode::Write => (HEADER, HEADER + LL_FIFO + LL128_FIFO + simple),
        P2pMode::Read => (HEADER + simple, HEADER + LL_FIFO + LL128_FIFO),
    };
    (
        Bytes(round_up(send, CUDA_IPC_MIN)),
        Bytes(round_up(recv, CUDA_IPC_MIN)),
    )
}

/// NCCL's buffers on one GPU for a ring over `channels` channels (one
/// connection to the next GPU and one from the previous per channel): what
/// data parallelism's all-reduce, ZeRO's reduce-scatter and all-gather and
/// tensor parallelism's collectives use within a node.
pub fn ring(channels: u32, mode: P2pMode) -> Bytes {
    let (send, recv) = p2p_connection(mode, SIMPLE_FIFO);
    Bytes(u64::from(channels) * (send.0 + recv.0))
}

/// NCCL's buffers on one GPU for all-to-all (or send/recv) with `peers`
/// other GPUs over `channels_per_peer` channels each: a connection to and
/// from every peer on every channel.
pub fn all_to_all(peers: u32, channels_per_peer: u32, mode: P2pMode) -> Bytes {
    let (send, recv) = p2p_connection(mode, SIMPLE_FIFO);
    Bytes(u64::from(peers) * u64::from(channels_per_peer) * (send.0 + recv.0))
}

/// Collective channels NCCL's INFO logs report: 4 between two GPUs over
/// PCIe ("4 coll channels", NVIDIA/nccl#1706) to 16 over NVLink ("16 coll
/// channels", eight H800s in NVIDIA/nccl#892, two GPUs in vllm-project/vllm
/// #10978). NCCL picks the count by its topology search, which vramfit does
/// not model, so a run's buffers are given over this range.
pub const COLL_CHANNELS: [u32; 2] = [4, 16];

/// P2P channels per peer in the same logs: 2 (NVIDIA/nccl#1706) to 32
/// ("as many as 32 channels are created, per pair of GPUs", eight H100s,
/// NVIDIA/nccl#1685).
pub const P2P_CHANNELS_PER_PEER: [u32; 2] = [2, 32];

/// NCCL's connection buffers on one GPU of a multi-GPU run: outside
/// PyTorch's allocator, and not in vramfit's device figure (the channel
/// count is NCCL's choice), so given as a range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NcclBuffers {
    /// Communicators running ring collectives that this GPU belongs to:
    /// the data-parallel group's (all-reduce, or ZeRO/FSDP's reduce-scatter
    /// and all-gather; HYBRID_SHARD's shard and replica groups are two) and
    /// the tensor-parallel group's. The routed experts' own data-parallel
    /// group is not counted.
    pub rings: u32,
    /// Peers in the expert-parallel all-to-all (0: none).
    pub all_to_all_peers: u32,
    /// Whether the run spans nodes: connections between nodes go through
    /// the network transport, whose buffers are not modelled (the
    /// intra-node sizes are used for them).
    pub across_nodes: bool,
    /// With the fewest published channels ([`COLL_CHANNELS`], [`P2P_CHANNELS_PER_PEER`]).
    pub low: Bytes,
    /// With the most.
    pub high: Bytes,
}

/// The NCCL buffers of one GPU under `p`; `None` on one GPU. Pipeline
/// send/recv is left out: NCCL gives point-to-point operations one shared
/// buffer (NVIDIA/nccl#1450), whose size is not modelled.
pub fn for_parallel(p: &Parallel) -> Option<NcclBuffers> {
    if p.world() <= 1 {
        return None;
    }
    let mut rings = 0;
    if p.dp() > 1 {
        rings += if p.strategy == Strategy::FsdpHybrid && p.nodes > 1 {
            2
        } else {
            1
        };
    }
    if p.tp > 1 {
        rings += 1;
    }
    let peers = u32::try_from(p.ep.max(1) - 1).unwrap_or(u32::MAX);
    let at = |[coll, p2p]: [u32; 2]| {
        let ring_bytes = ring(coll, P2pMode::Write).0.saturating_mul(rings);
        Bytes(ring_bytes.saturating_add(all_to_all(peers, p2p, P2pMode::Write).0))
    };
    Some(NcclBuffers {
        rings: u32::try_from(rings).unwrap_or(u32::MAX),
        all_to_all_peers: peers,
        across_nodes: p.nodes > 1,
        low: at([COLL_CHANNELS[0], P2P_CHANNELS_PER_PEER[0]]),
        high: at([COLL_CHANNELS[1], P2P_CHANNELS_PER_PEER[1]]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fifos_are_nccls_defaults() {
        assert_eq!(LL_FIFO, 524_288);
        assert_eq!(LL128_FIFO, 4_915_200);
        assert_eq!(SIMPLE_FIFO, 4_194_304);
    }

    /// NVIDIA/nccl#1685 (8× H100, all-to-all over P2P in write mode) saw
    /// exactly two buffer sizes: "one type of size 10485760, the other type
    /// of size 2097152".
    #[test]
    fn a_write_mode_connection_is_the_two_sizes_nccl_1685_saw() {
        let (send, recv) = p2p_connection(P2pMode::Write, SIMPLE_FIFO);
        assert_eq!(recv, Bytes(10_485_760));
        assert_eq!(send, Bytes(2_097_152));
    }

    #[test]
    fn read_mode_moves_the_simple_fifo_to_the_sender() {
        let (send, recv) = p2p_connection(P2pMode::Read, SIMPLE_FIFO);
        assert_eq!((send, recv), (Bytes(6 * MIB), Bytes(6 * MIB)));
        // NCCL_BUFFSIZE=1 MiB shrinks the sender's share only.
        let (send, recv) = p2p_connection(P2pMode::Read, MIB);
        assert_eq!((send, recv), (Bytes(2 * MIB), Bytes(6 * MIB)));
    }

    #[test]
    fn buffers_grow_with_channels_and_peers() {
        assert_eq!(ring(16, P2pMode::Write), Bytes(16 * 12 * MIB));
        assert_eq!(ring(0, P2pMode::Write), Bytes::ZERO);
        assert_eq!(
            all_to_all(7, 32, P2pMode::Write).0,
            7 * ring(32, P2pMode::Write).0
        );
    }

    #[test]
    fn each_communicator_adds_its_rings() {
        let p = |strategy, gpus, tp, ep| Parallel {
            strategy,
            gpus_per_node: gpus,
            tp,
            ep,
            ..Parallel::default()
        };
        assert_eq!(for_parallel(&p(Strategy::Single, 1, 1, 1)), None);
        let ddp = for_parallel(&p(Strategy::Ddp, 8, 1, 1)).unwrap();
        assert_eq!((ddp.rings, ddp.all_to_all_peers), (1, 0));
        // A ring channel: one connection out (2 MiB) and one in (10 MiB).
        assert_eq!(
            (ddp.low, ddp.high),
            (Bytes(4 * 12 * MIB), Bytes(16 * 12 * MIB))
        );
        let tp = for_parallel(&p(Strategy::Ddp, 8, 2, 1)).unwrap();
        assert_eq!(tp.rings, 2);
        assert_eq!(tp.high.0, 2 * ddp.high.0);
        // Tensor parallelism over all eight GPUs leaves no data-parallel ring.
        assert_eq!(for_parallel(&p(Strategy::Ddp, 8, 8, 1)).unwrap().rings, 1);
        let ep = for_parallel(&p(Strategy::Ddp, 8, 1, 8)).unwrap();
        assert_eq!(ep.all_to_all_peers, 7);
        assert_eq!(ep.high.0, ddp.high.0 + all_to_all(7, 32, P2pMode::Write).0);
    }

    /// Published totals hold more than the connection buffers (proxy state,
    /// work FIFOs, the device communicator), so the buffers must stay
    /// under them: NVIDIA/nccl#1685, 8× H100, the first
    /// `all_to_all_single` grew non-PyTorch memory from "1.06 GB" to
    /// "4.34 GB" with "as many as 32 channels ... per pair of GPUs" (3.28 GB,
    /// read as 10^9 bytes, the smaller reading).
    #[test]
    fn the_buffers_stay_under_the_published_all_to_all_growth() {
        let ours = all_to_all(7, 32, P2pMode::Write).0;
        let published = 3_280_000_000_u64;
        assert!(ours <= published, "{ours} > {published}");
        // And they are most of it: 2688 MiB of 3.28 GB.
        assert_eq!(ours, 2688 * MIB);
    }
}
