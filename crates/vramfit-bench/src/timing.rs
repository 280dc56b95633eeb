//! Timing a list of [`Dispatch`]es: warm-up, then repeated batches, each
//! timed with GPU timestamps when the device has `TIMESTAMP_QUERY`, with
//! the wall clock otherwise.
//!
//! One timed run records the work `batch` times in a single compute pass
//! and submits it once. `batch` is calibrated after the warm-up so that a
//! run lasts at least [`TimingOptions::min_span_s`] (browsers quantise
//! timestamps to 100 µs, and submission overhead must vanish in the span)
//! and at most [`TimingOptions::max_span_s`] (one submission must stay far
//! below the ~2 s after which Windows resets the GPU). The clock is passed
//! in, because `std::time::Instant` panics on wasm: natively use
//! [`native_clock`], in a browser `performance.now() / 1000`.

use crate::context::GpuContext;
use crate::error::{BenchError, Result};
use crate::pipeline::Dispatch;
use crate::readback::{read_buffer, wait_idle};
use crate::scope::catch_gpu_errors;

/// How much to time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimingOptions {
    /// Untimed runs first (pipeline compilation, lazy allocation, clocks
    /// ramping up).
    pub warmup: u32,
    /// Timed runs; the statistics are over these.
    pub runs: u32,
    /// The shortest a timed run should last, in seconds.
    pub min_span_s: f64,
    /// The longest a timed run may last, in seconds.
    pub max_span_s: f64,
    /// The most repetitions of the work in one run.
    pub max_batch: u32,
}

impl Default for TimingOptions {
    /// 3 warm-ups, 10 runs of 10–250 ms.
    fn default() -> Self {
        Self {
            warmup: 3,
            runs: 10,
            min_span_s: 0.010,
            max_span_s: 0.250,
            max_batch: 1000,
        }
    }
}

impl TimingOptions {
    /// A quick setting for CI and tests: 1 warm-up, 3 runs of at least 1 ms.
    pub fn quick() -> Self {
        Self {
            warmup: 1,
            runs: 3,
            min_span_s: 0.001,
            max_span_s: 0.100,
            max_batch: 100,
        }
    }
}

/// Which clock measured a timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timer {
    /// GPU timestamps written at the start and end of the compute pass.
    GpuTimestamps,
    /// The host clock from submission until the queue reported completion.
    WallClock,
}

/// Seconds per repetition of the work, one entry per timed run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Timing {
    /// The clock used.
    pub timer: Timer,
    /// Repetitions of the work per run.
    pub batch: u32,
    /// Seconds per repetition, in run order.
    pub seconds: Vec<f64>,
}

impl Timing {
    /// The `q`-quantile (0 = min, 0.5 = median, 1 = max) of the per-run
    /// times, by linear interpolation; `NaN` without runs.
    pub fn quantile(&self, q: f64) -> f64 {
        let mut sorted = self.seconds.clone();
        sorted.sort_by(f64::total_cmp);
        let Some(last) = sorted.len().checked_sub(1) else {
            return f64::NAN;
        };
        let position = q.clamp(0.0, 1.0) * last as f64;
        let (low, high) = (position.floor() as usize, position.ceil() as usize);
        let (Some(a), Some(b)) = (sorted.get(low), sorted.get(high)) else {
            return f64::NAN;
        };
        a + (b - a) * (position - low as f64)
    }

    /// The median time per repetition.
    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }
}

/// A clock for native builds: seconds since the first call.
#[cfg(not(target_arch = "wasm32"))]
pub fn native_clock() -> f64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// Times `work` (recorded in order, as one repetition) on `ctx`.
///
/// # Errors
///
/// [`BenchError::InvalidShape`] for empty work or zero runs, and the device
/// and read-back errors of [`BenchError`].
pub async fn time_dispatches(
    ctx: &GpuContext,
    work: &[Dispatch],
    options: &TimingOptions,
    clock: &dyn Fn() -> f64,
) -> Result<Timing> {
    if work.is_empty() || options.runs == 0 {
        return Err(BenchError::InvalidShape {
            kernel: "timing",
            what: "nothing to time (no dispatches or zero runs)".into(),
        });
    }
    let timestamps = Timestamps::new(ctx);
    for _ in 0..options.warmup {
        run_once(ctx, work, 1, None, clock).await?;
    }
    let single = run_once(ctx, work, 1, None, clock).await?.max(1e-9);
    let wanted = (options.min_span_s / single).ceil();
    let affordable = (options.max_span_s / single).floor().max(1.0);
    let batch = wanted
        .min(affordable)
        .clamp(1.0, f64::from(options.max_batch.max(1))) as u32;

    let mut seconds = Vec::with_capacity(options.runs as usize);
    let mut all_gpu = timestamps.is_some();
    for _ in 0..options.runs {
        let wall = run_once(ctx, work, batch, timestamps.as_ref(), clock).await?;
        let gpu = match &timestamps {
            Some(t) => t.read(ctx).await?,
            None => None,
        };
        all_gpu &= gpu.is_some();
        seconds.push(gpu.unwrap_or(wall) / f64::from(batch));
    }
    Ok(Timing {
        timer: if all_gpu {
            Timer::GpuTimestamps
        } else {
            Timer::WallClock
        },
        batch,
        seconds,
    })
}

/// Records `work` `batch` times in one pass, submits, waits; returns the
/// wall-clock seconds from submission to completion.
async fn run_once(
    ctx: &GpuContext,
    work: &[Dispatch],
    batch: u32,
    timestamps: Option<&Timestamps>,
    clock: &dyn Fn() -> f64,
) -> Result<f64> {
    let device = ctx.device();
    let start = catch_gpu_errors(device, "timing", || {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("timed work"),
        });
        {
            let timestamp_writes = timestamps.map(|t| wgpu::ComputePassTimestampWrites {
                query_set: &t.queries,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            });
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("timed work"),
                timestamp_writes,
            });
            for _ in 0..batch {
                for dispatch in work {
                    dispatch.record(&mut pass);
                }
            }
        }
        if let Some(t) = timestamps {
            encoder.resolve_query_set(&t.queries, 0..2, &t.resolve, 0);
            encoder.copy_buffer_to_buffer(&t.resolve, 0, &t.staging, 0, t.resolve.size());
        }
        let command_buffer = encoder.finish();
        let start = clock();
        ctx.queue().submit([command_buffer]);
        start
    })
    .await?;
    wait_idle(ctx).await?;
    Ok(clock() - start)
}

/// A query set of two timestamps and the buffers to read them back.
struct Timestamps {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    staging: wgpu::Buffer,
}

impl Timestamps {
    /// `None` if the device lacks `TIMESTAMP_QUERY`.
    fn new(ctx: &GpuContext) -> Option<Self> {
        let device = ctx.device();
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let size = 2 * u64::from(wgpu::QUERY_SIZE);
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        Some(Self {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: buffer(
                "timestamp resolve",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            staging: buffer(
                "timestamp read-back",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
        })
    }

    /// The pass's duration in seconds, or `None` if the timestamps are not
    /// increasing (some drivers write zeros; then the wall clock is used).
    async fn read(&self, ctx: &GpuContext) -> Result<Option<f64>> {
        let ticks: Vec<u64> = read_buffer(ctx.device(), &self.staging).await?;
        let period_ns = f64::from(ctx.queue().get_timestamp_period());
        Ok(match ticks.as_slice() {
            [begin, end] if end > begin => Some((end - begin) as f64 * period_ns * 1e-9),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Timer, Timing};

    #[test]
    fn quantiles_interpolate_between_sorted_runs() {
        let t = Timing {
            timer: Timer::WallClock,
            batch: 1,
            seconds: vec![4.0, 1.0, 3.0, 2.0, 5.0],
        };
        assert_eq!(t.median(), 3.0);
        assert_eq!(t.quantile(0.0), 1.0);
        assert_eq!(t.quantile(1.0), 5.0);
        assert_eq!(t.quantile(0.125), 1.5);
        assert!(
            Timing {
                seconds: vec![],
                ..t
            }
            .median()
            .is_nan()
        );
    }
}
