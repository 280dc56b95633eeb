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
//!
//! On a node whose GPUs meet at NVSwitch chips that reduce in the switch
//! (NVLink SHARP, "NVLS"), a communicator may also run its collectives
//! through multicast buffers of its own ([`nvls`]).

use crate::gpus::{Arch, GpuPreset};
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

/// `NCCL_NVLS_CHUNKSIZE`'s default: 128 KiB a step.
const NVLS_CHUNK: u64 = 128 * 1024;
/// `NCCL_MAX_NVLS_ARITY`: the most GPUs of a node one NVLS group takes.
const NVLS_MAX_HEADS: u64 = 32;
/// Bytes of credits per channel, direction and head (`memSize`).
const NVLS_CREDIT: u64 = 64;
/// The granularity NVLS buffers are mapped in (`NVLS_MEM_ALIGN_SIZE`, and
/// `cuMemGetAllocationGranularity`'s recommendation on these GPUs).
const NVLS_GRANULE: u64 = 2 * MIB;

/// NVLS channels NCCL gives a communicator on `arch` (`ncclNvlsTuning`:
/// `NVLS_NCHANNELS_SM90` 16 on Hopper; on Blackwell
/// `NVLS_NCHANNELS_SM100_NVL` 24 within one node, `NVLS_NCHANNELS_SM100` 32
/// across nodes), or `None` where the GPU cannot run NVLS: NCCL searches NVLS
/// graphs only on nodes with NVSwitches and GPUs of compute capability 9.0 or
/// later (`ncclTopoCompute`).
pub fn nvls_channels(arch: Arch, across_nodes: bool) -> Option<u32> {
    match arch {
        Arch::Hopper => Some(16),
        Arch::Blackwell => Some(if across_nodes { 32 } else { 24 }),
        _ => None,
    }
}

/// Whether a GPU preset is sold on boards whose GPUs meet at NVLink
/// switches that reduce (third-generation NVSwitch on): the SXM modules of
/// HGX and DGX H100, H200 and B200 boards. PCIe cards (H100 PCIe, pairs
/// bridged as H100 NVL) have no NVSwitch, and an A100's NVSwitch does not
/// reduce. A board property, not the architecture's, so a list of presets.
pub fn on_nvswitch_boards(gpu: &GpuPreset) -> bool {
    matches!(gpu.id.as_ref(), "h100-sxm" | "h200" | "b200")
}

/// NVLS buffers on one GPU of a communicator with `local_gpus` GPUs on its
/// node, over `channels` NVLS channels (`ncclNvlsBufferSetup` and
/// `ncclNvlsSetup`, `src/transport/nvls.cc`): `channels × 2 ×
/// NCCL_NVLS_CHUNKSIZE × NCCL_STEPS` for each head (a head per GPU of the
/// node, at most 32), and `channels × 2 × 64 B` of credits per head, each
/// mapped whole in 2 MiB granules. Nothing with fewer than two GPUs on the
/// node (`ncclNvlsInit`). The sizes of NCCL 2.23 on (2.23.4, 2.26.2, 2.27.3,
/// 2.28.3 and 2.30.7 read alike); 2.21.5, PyTorch 2.6's, added a 2 MiB
/// granule to each channel's buffer, three times the size.
pub fn nvls(channels: u32, local_gpus: u64) -> Bytes {
    if local_gpus < 2 {
        return Bytes::ZERO;
    }
    let per_head = u64::from(channels) * 2;
    let heads = local_gpus.min(NVLS_MAX_HEADS);
    let data = per_head * NVLS_CHUNK * STEPS * heads;
    let credits = per_head * NVLS_CREDIT * heads;
    Bytes(round_up(data, NVLS_GRANULE) + round_up(credits, NVLS_GRANULE))
}

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
    /// NVLS buffers of the ring communicators ([`nvls`]), on GPUs sold on
    /// NVSwitch boards ([`on_nvswitch_boards`]); zero elsewhere. NCCL sets
    /// them up when its tuner first picks an NVLS algorithm (with runtime
    /// connection, its default) and at once without it; on a board without
    /// NVSwitch, or with `NCCL_NVLS_ENABLE=0`, never. So they are in
    /// [`NcclBuffers::high`] only.
    pub nvls: Bytes,
    /// With the fewest published channels ([`COLL_CHANNELS`], [`P2P_CHANNELS_PER_PEER`]).
    pub low: Bytes,
    /// With the most, and the NVLS buffers.
    pub high: Bytes,
}

/// The NCCL buffers of one GPU under `p` on `gpu`; `None` on one GPU.
/// Pipeline send/recv is left out: NCCL gives point-to-point operations one
/// shared buffer (NVIDIA/nccl#1450), whose size is not modelled.
pub fn for_parallel(p: &Parallel, gpu: Option<&GpuPreset>) -> Option<NcclBuffers> {
    if p.world() <= 1 {
        return None;
    }
    let node = p.gpus_per_node.max(1);
    let tp_local = p.tp.max(1).min(node);
    // Each ring communicator's GPUs on one node. Megatron's order puts the
    // tensor-parallel group innermost and the data-parallel one next, so a
    // node holds `gpus_per_node / tp` of a data-parallel group's GPUs;
    // HYBRID_SHARD's replica group has one GPU on each node.
    let mut rings: Vec<u64> = Vec::new();
    if p.dp() > 1 {
        rings.push((node / tp_local).min(p.dp()));
        if p.strategy == Strategy::FsdpHybrid && p.nodes > 1 {
            rings.push(1);
        }
    }
    if p.tp > 1 {
        rings.push(tp_local);
    }
    let nvls_bytes = gpu
        .filter(|g| on_nvswitch_boards(g))
        .and_then(|g| nvls_channels(g.arch, p.nodes > 1))
        .map_or(Bytes::ZERO, |channels| {
            Bytes(rings.iter().map(|&local| nvls(channels, local).0).sum())
        });
    let rings = u64::try_from(rings.len()).unwrap_or(u64::MAX);
    let peers = u32::try_from(p.ep.max(1) - 1).unwrap_or(u32::MAX);
    let at = |[coll, p2p]: [u32; 2]| {
        let ring_bytes = ring(coll, P2pMode::Write).0.saturating_mul(rings);
        Bytes(ring_bytes.saturating_add(all_to_all(peers, p2p, P2pMode::Write).0))
    };
    Some(NcclBuffers {
        rings: u32::try_from(rings).unwrap_or(u32::MAX),
        all_to_all_peers: peers,
        across_nodes: p.nodes > 1,
        nvls: nvls_bytes,
        low: at([COLL_CHANNELS[0], P2P_CHANNELS_PER_PEER[0]]),
        high: Bytes(
            at([COLL_CHANNELS[1], P2P_CHANNELS_PER_PEER[1]])
                .0
                .saturating_add(nvls_bytes.0),
        ),
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
        assert_eq!(for_parallel(&p(Strategy::Single, 1, 1, 1), None), None);
        let ddp = for_parallel(&p(Strategy::Ddp, 8, 1, 1), None).unwrap();
        assert_eq!((ddp.rings, ddp.all_to_all_peers), (1, 0));
        // A ring channel: one connection out (2 MiB) and one in (10 MiB).
        assert_eq!(
            (ddp.low, ddp.high),
            (Bytes(4 * 12 * MIB), Bytes(16 * 12 * MIB))
        );
        let tp = for_parallel(&p(Strategy::Ddp, 8, 2, 1), None).unwrap();
        assert_eq!(tp.rings, 2);
        assert_eq!(tp.high.0, 2 * ddp.high.0);
        // Tensor parallelism over all eight GPUs leaves no data-parallel ring.
        assert_eq!(
            for_parallel(&p(Strategy::Ddp, 8, 8, 1), None)
                .unwrap()
                .rings,
            1
        );
        let ep = for_parallel(&p(Strategy::Ddp, 8, 1, 8), None).unwrap();
        assert_eq!(ep.all_to_all_peers, 7);
        assert_eq!(ep.high.0, ddp.high.0 + all_to_all(7, 32, P2pMode::Write).0);
    }

    fn preset(id: &str) -> GpuPreset {
        crate::gpu_presets()
            .into_iter()
            .find(|g| g.id == id)
            .expect("a preset of the list")
    }

    /// An NCCL INFO log of eight H100s (found through a code index that does
    /// not name its repository; "16 nvls channels" in the same log): "NVLS
    /// comm ... nHeads 8 nvlsRanks 8 buffSize 1048576 nvlsPerRankSize
    /// 33554432 nvlsTotalSize 268435456". The credits add one granule.
    #[test]
    fn eight_h100s_take_the_nvls_buffers_nccls_log_prints() {
        assert_eq!(nvls(16, 8), Bytes(268_435_456 + 2 * MIB));
        assert_eq!(nvls(16, 1), Bytes::ZERO);
        // Heads stop at NCCL_MAX_NVLS_ARITY.
        assert_eq!(nvls(16, 64), nvls(16, 32));
        assert_eq!(nvls_channels(Arch::Blackwell, false), Some(24));
        assert_eq!(nvls_channels(Arch::Ampere, false), None);
    }

    #[test]
    fn nvls_buffers_join_the_high_end_on_nvswitch_boards_only() {
        let p = |strategy, gpus, nodes, tp| Parallel {
            strategy,
            gpus_per_node: gpus,
            nodes,
            tp,
            ..Parallel::default()
        };
        let ddp = p(Strategy::Ddp, 8, 1, 1);
        let on = |id: &str, p: &Parallel| for_parallel(p, Some(&preset(id))).unwrap();
        let without = for_parallel(&ddp, None).unwrap();
        let h100 = on("h100-sxm", &ddp);
        assert_eq!(h100.nvls, nvls(16, 8));
        assert_eq!(h100.low, without.low);
        assert_eq!(h100.high, Bytes(without.high.0 + h100.nvls.0));
        // Blackwell: 24 channels within a node.
        assert_eq!(on("b200", &ddp).nvls, Bytes(384 * MIB + 2 * MIB));
        for id in ["h100-pcie", "a100-80gb", "rtx-4090"] {
            assert_eq!(on(id, &ddp).nvls, Bytes::ZERO, "{id}");
        }
        // Tensor parallelism over the node: its group has the eight GPUs,
        // and no data-parallel group is left.
        assert_eq!(on("h100-sxm", &p(Strategy::Ddp, 8, 1, 8)).nvls, nvls(16, 8));
        // TP 2 and DP 4 on a node: two groups, of 2 and 4 GPUs.
        assert_eq!(
            on("h200", &p(Strategy::Ddp, 8, 1, 2)).nvls,
            Bytes(nvls(16, 2).0 + nvls(16, 4).0)
        );
        // HYBRID_SHARD over two nodes: the shard group's eight GPUs; the
        // replica group has one GPU on each node.
        assert_eq!(
            on("h100-sxm", &p(Strategy::FsdpHybrid, 8, 2, 1)).nvls,
            nvls(16, 8)
        );
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
