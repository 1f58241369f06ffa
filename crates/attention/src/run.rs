//! Runs one attention kernel on a [`Gpu`]: checks the shape against the adapter's limits
//! before allocating anything (the clean out-of-memory the guide shows), fills the inputs
//! on the GPU, dispatches warm-up and timed repeats as separate submissions (so a page
//! stays responsive between them), times them with timestamp queries where the adapter
//! has them, and checks a sample of output rows against the f64 reference.

use wgpu::util::DeviceExt;

use crate::gpu::{Gpu, GpuError};
use crate::plan::{Caps, TilePlan};
use crate::reference::reference_row;
use crate::shape::{self, BufferRole, Dtype, Kernel, MemoryLimits, Shape, ShapeError, TooLarge};
use crate::source;

/// How a run is repeated and checked.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub warmup: u32,
    /// Warm-up goes on past `warmup` repetitions until this much time was spent in
    /// them (clocks and caches settle; at most 1,000 repetitions), ms.
    pub warmup_ms: f64,
    pub repeats: u32,
    /// Multiply-adds the CPU reference may spend on the check (rows are sampled to fit).
    pub check_budget: u64,
    /// What the user allows in total, bytes.
    pub max_total: Option<u64>,
    /// Compile with wgpu's loop-bounding guard (natively it is left out; see `module`).
    /// A diagnostic: it measures what the guard costs on a driver.
    pub loop_bounding: bool,
    /// Tiles for the tiled kernel instead of the adapter's best plan.
    pub tiles: Option<TilePlan>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            warmup: 1,
            warmup_ms: 0.0,
            repeats: 5,
            check_budget: 50_000_000,
            max_total: None,
            loop_bounding: false,
            tiles: None,
        }
    }
}

/// Where the times come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Timestamp queries around the compute pass.
    Gpu,
    /// Submit-to-done on the host clock.
    Wall,
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct RunReport {
    pub kernel: Kernel,
    pub shape: Shape,
    pub dtype: Dtype,
    /// The tiling the tiled kernel used.
    pub plan: Option<TilePlan>,
    pub times_ms: Vec<f64>,
    pub median_ms: f64,
    pub min_ms: f64,
    /// The 90th percentile (nearest rank) of the timed repetitions.
    pub p90_ms: f64,
    pub gflops: f64,
    pub max_abs_err: f64,
    pub checked_rows: u32,
    /// The checked rows (flat indices over B·H·N) and their values, so two kernels run
    /// on the same shape can be compared with each other.
    pub sampled_rows: Vec<u64>,
    pub sample: Vec<f32>,
    pub extra_bytes: u64,
    pub total_bytes: u64,
    pub timing: Timing,
}

/// Why a run did not produce a report.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Shape(#[from] ShapeError),
    #[error("{0}")]
    TooLarge(TooLarge),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Gpu(#[from] GpuError),
    /// The caller asked to stop (between two submissions).
    #[error("cancelado")]
    Cancelled,
}

impl RunError {
    /// The bytes a run needed when it failed on memory.
    pub fn needed_bytes(&self) -> Option<u64> {
        match self {
            RunError::TooLarge(t) => Some(t.needed),
            _ => None,
        }
    }
}

/// The median of `values` (mean of the two middle ones for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The `p`-th percentile (nearest rank, 0 < p ≤ 100) of the finite values; NaN when
/// there are none.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Rows to check: evenly spaced over all B·H·N rows, the last one included, as many
/// as `budget` multiply-adds allow (at least one, at most 4,096).
pub fn sample_rows(shape: &Shape, budget: u64) -> Vec<u64> {
    let total = shape.bh() * u64::from(shape.seq);
    let per_row = 2 * u64::from(shape.seq) * u64::from(shape.head_dim);
    let count = (budget / per_row.max(1)).clamp(1, 4096).min(total);
    if count <= 1 {
        return vec![total.saturating_sub(1)];
    }
    (0..count).map(|i| i * (total - 1) / (count - 1)).collect()
}

/// The adapter limits a run is checked against.
pub fn memory_limits(gpu: &Gpu, max_total: Option<u64>) -> MemoryLimits {
    MemoryLimits {
        max_buffer: gpu.limits.max_buffer_size,
        max_binding: gpu.limits.max_storage_buffer_binding_size,
        max_total,
    }
}

struct Dispatch {
    entry: &'static str,
    groups: [u32; 3],
}

fn dispatches(kernel: Kernel, shape: &Shape, plan: &TilePlan) -> Vec<Dispatch> {
    let n = shape.seq;
    let bh = u32::try_from(shape.bh()).unwrap_or(u32::MAX);
    match kernel {
        Kernel::Naive => vec![
            Dispatch {
                entry: "scores",
                groups: [n.div_ceil(64), n.div_ceil(64), bh],
            },
            Dispatch {
                entry: "softmax",
                groups: [n.div_ceil(4), bh, 1],
            },
            Dispatch {
                entry: "pv",
                groups: [shape.head_dim.div_ceil(64), n.div_ceil(64), bh],
            },
        ],
        Kernel::Tiled => vec![Dispatch {
            entry: "tiled",
            groups: [n.div_ceil(plan.br), bh, 1],
        }],
    }
}

fn layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    let storage = |binding| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: false },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let mut entries = vec![wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }];
    entries.extend((1..=5).map(storage));
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("attention"),
        entries: &entries,
    })
}

/// The shader module for `source`. Natively it is compiled without wgpu's loop
/// bounding unless `loop_bounding` asks for it: that guard adds a 64-bit counter to every
/// loop so a driver cannot assume an infinite loop away, and the extra exit hides the
/// trip count from the driver's unroller. Every loop of these kernels ends: each walks a
/// range below the sequence length or a constant, with a step of at least 1, and
/// `shape::Shape::validate` keeps N far below `u32::MAX`. Bounds checks stay on. The
/// browser compiles WGSL itself (Tint adds its own guards), so the web takes the
/// ordinary path.
fn module(
    device: &wgpu::Device,
    source: &str,
    entry: &str,
    loop_bounding: bool,
) -> wgpu::ShaderModule {
    let desc = wgpu::ShaderModuleDescriptor {
        label: Some(entry),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    };
    if loop_bounding || cfg!(target_arch = "wasm32") {
        return device.create_shader_module(desc);
    }
    let checks = wgpu::ShaderRuntimeChecks {
        force_loop_bounding: false,
        ..wgpu::ShaderRuntimeChecks::checked()
    };
    // SAFETY: wgpu requires that a module compiled without loop bounding has no infinite
    // loop; the kernels' loops all terminate (see above). Every other check is kept.
    #[allow(unsafe_code)]
    unsafe {
        device.create_shader_module_trusted(desc, checks)
    }
}

fn pipeline(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    source: &str,
    entry: &str,
    loop_bounding: bool,
) -> wgpu::ComputePipeline {
    let module = module(device, source, entry, loop_bounding);
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(layout),
        module: &module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    })
}

struct Prepared {
    init: wgpu::ComputePipeline,
    kernels: Vec<(wgpu::ComputePipeline, [u32; 3])>,
    bind_group: wgpu::BindGroup,
    output: wgpu::Buffer,
}

/// Everything that can be decided without allocating: shape, features, limits, tiles
/// (`tiles` when given, checked against the adapter, else the adapter's best plan).
pub fn preflight(
    gpu: &Gpu,
    kernel: Kernel,
    shape: &Shape,
    dtype: Dtype,
    max_total: Option<u64>,
    tiles: Option<TilePlan>,
) -> Result<TilePlan, RunError> {
    shape.validate()?;
    if dtype == Dtype::F16 && !gpu.has_f16() {
        return Err(RunError::Unsupported(
            "este adaptador no ofrece shader-f16: usa f32".into(),
        ));
    }
    shape::check_limits(kernel, shape, dtype, &memory_limits(gpu, max_total))
        .map_err(RunError::TooLarge)?;
    let caps = Caps::from_limits(&gpu.limits);
    let plan = match tiles {
        Some(p) if p.head_dim != shape.head_dim => {
            return Err(RunError::Unsupported(format!(
                "los bloques {} son para d = {}, no para d = {}",
                p.label(),
                p.head_dim,
                shape.head_dim
            )));
        }
        Some(p) if !p.fits(&caps) => {
            return Err(RunError::Unsupported(format!(
                "los bloques {} no caben en este adaptador ({} bytes de memoria de grupo de trabajo, {} invocaciones; hacen falta {} bytes y {} invocaciones, y BR, BC y D/4 divisibles entre TR, TC y TC)",
                p.label(),
                caps.workgroup_storage,
                caps.invocations,
                p.workgroup_bytes(),
                p.workgroup_size()
            )));
        }
        Some(p) => p,
        None => TilePlan::choose(shape.head_dim, &caps).ok_or_else(|| {
            RunError::Unsupported(format!(
                "el adaptador ofrece {} bytes de memoria de grupo de trabajo y {} invocaciones, menos que el mínimo de WebGPU",
                gpu.limits.max_compute_workgroup_storage_size,
                gpu.limits.max_compute_invocations_per_workgroup
            ))
        })?,
    };
    let max_groups = gpu.limits.max_compute_workgroups_per_dimension;
    for d in dispatches(kernel, shape, &plan) {
        if d.groups.iter().any(|&g| g > max_groups) {
            return Err(RunError::Unsupported(format!(
                "la secuencia es demasiado larga para una sola orden de cómputo ({:?} grupos; el adaptador admite {max_groups} por dimensión)",
                d.groups
            )));
        }
    }
    Ok(plan)
}

async fn prepare(
    gpu: &Gpu,
    kernel: Kernel,
    shape: &Shape,
    dtype: Dtype,
    plan: &TilePlan,
    loop_bounding: bool,
) -> Result<Prepared, GpuError> {
    let specs = shape::buffers(kernel, shape, dtype);
    gpu.checked(|gpu| {
        let device = &gpu.device;
        let params: [u32; 4] = [
            shape.seq,
            u32::try_from(shape.bh()).unwrap_or(u32::MAX),
            u32::from(shape.causal),
            (1.0 / f64::from(shape.head_dim).sqrt() as f32).to_bits(),
        ];
        let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytemuck::cast_slice(&params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let buffer = |role: BufferRole| {
            let bytes = specs.iter().find(|b| b.role == role).map_or(4, |b| b.bytes);
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(role.label()),
                size: bytes.max(4).next_multiple_of(4),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let extra_role = match kernel {
            Kernel::Naive => BufferRole::Scores,
            Kernel::Tiled => BufferRole::LogSumExp,
        };
        let [q, k, v, o, extra] = [
            BufferRole::Q,
            BufferRole::K,
            BufferRole::V,
            BufferRole::Output,
            extra_role,
        ]
        .map(buffer);
        let bind_layout = layout(device);
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("attention"),
            bind_group_layouts: &[Some(&bind_layout)],
            immediate_size: 0,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("attention"),
            layout: &bind_layout,
            entries: &[&uniform, &q, &k, &v, &o, &extra]
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: b.as_entire_binding(),
                })
                .collect::<Vec<_>>(),
        });
        let init = pipeline(
            device,
            &pipeline_layout,
            &source::init_source(dtype, shape.head_dim),
            "init",
            loop_bounding,
        );
        let text = source::kernel_source(kernel, dtype, plan);
        let kernels = dispatches(kernel, shape, plan)
            .into_iter()
            .map(|d| {
                (
                    pipeline(device, &pipeline_layout, &text, d.entry, loop_bounding),
                    d.groups,
                )
            })
            .collect();
        Prepared {
            init,
            kernels,
            bind_group,
            output: o,
        }
    })
    .await
}

/// Runs `kernel` on `shape` and checks it. `now_ms` is the host clock (`Instant` on
/// native, `performance.now()` on the web), used when there are no timestamp queries.
pub async fn run(
    gpu: &Gpu,
    kernel: Kernel,
    shape: &Shape,
    dtype: Dtype,
    options: &RunOptions,
    now_ms: &dyn Fn() -> f64,
) -> Result<RunReport, RunError> {
    run_until(gpu, kernel, shape, dtype, options, now_ms, &|| false).await
}

/// [`run`], asking `stop` before every submission: a page's Cancel button acts after
/// the dispatch in flight, not after the whole run (a large N on a CPU adapter takes
/// tens of seconds per dispatch).
pub async fn run_until(
    gpu: &Gpu,
    kernel: Kernel,
    shape: &Shape,
    dtype: Dtype,
    options: &RunOptions,
    now_ms: &dyn Fn() -> f64,
    stop: &dyn Fn() -> bool,
) -> Result<RunReport, RunError> {
    let plan = preflight(gpu, kernel, shape, dtype, options.max_total, options.tiles)?;
    let prepared = prepare(gpu, kernel, shape, dtype, &plan, options.loop_bounding).await?;

    // Inputs, once.
    let total = shape.tensor_elems();
    let init_groups = u32::try_from(total.div_ceil(256).min(4096)).unwrap_or(4096);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&prepared.init);
        pass.set_bind_group(0, &prepared.bind_group, &[]);
        pass.dispatch_workgroups(init_groups, 1, 1);
    }
    gpu.queue.submit([encoder.finish()]);
    gpu.finish().await?;

    let timing = if gpu.has_timestamps() {
        Timing::Gpu
    } else {
        Timing::Wall
    };
    let mut warmed = 0.0;
    let mut warmups = 0u32;
    while warmups < options.warmup || (warmed < options.warmup_ms && warmups < 1000) {
        if stop() {
            return Err(RunError::Cancelled);
        }
        warmed += timed_submission(gpu, &prepared, timing, now_ms).await?;
        warmups += 1;
    }
    let mut times_ms = Vec::new();
    for _ in 0..options.repeats.max(1) {
        if stop() {
            return Err(RunError::Cancelled);
        }
        times_ms.push(timed_submission(gpu, &prepared, timing, now_ms).await?);
    }
    let median_ms = median(&times_ms);
    let min_ms = percentile(&times_ms, 0.0);
    let p90_ms = percentile(&times_ms, 90.0);

    // Check sampled rows against the f64 reference.
    let rows = sample_rows(shape, options.check_budget);
    let d = u64::from(shape.head_dim);
    let row_bytes = d * dtype.bytes();
    let ranges: Vec<(u64, u64)> = rows.iter().map(|&r| (r * row_bytes, row_bytes)).collect();
    let bytes = gpu.read_ranges(&prepared.output, &ranges).await?;
    let values: Vec<f32> = match dtype {
        Dtype::F32 => bytemuck::pod_collect_to_vec::<u8, f32>(&bytes),
        Dtype::F16 => bytemuck::pod_collect_to_vec::<u8, u16>(&bytes)
            .into_iter()
            .map(|b| half::f16::from_bits(b).to_f32())
            .collect(),
    };
    let n = u64::from(shape.seq);
    let mut max_abs_err: f64 = 0.0;
    for (i, &g) in rows.iter().enumerate() {
        let bh = u32::try_from(g / n).unwrap_or(u32::MAX);
        let row = u32::try_from(g % n).unwrap_or(u32::MAX);
        let at = i * shape.head_dim as usize;
        let Some(got) = values.get(at..at + shape.head_dim as usize) else {
            return Err(GpuError::Readback("faltan filas en la lectura".into()).into());
        };
        for (x, r) in got.iter().zip(reference_row(shape, bh, row)) {
            let err = (f64::from(*x) - r).abs();
            // NaN must count as a failure, not vanish in `max`.
            max_abs_err = if err.is_nan() {
                f64::INFINITY
            } else {
                max_abs_err.max(err)
            };
        }
    }

    let gflops = shape.flops() / (median_ms * 1e-3) / 1e9;
    Ok(RunReport {
        kernel,
        shape: *shape,
        dtype,
        plan: (kernel == Kernel::Tiled).then_some(plan),
        times_ms,
        median_ms,
        min_ms,
        p90_ms,
        gflops,
        max_abs_err,
        checked_rows: u32::try_from(rows.len()).unwrap_or(u32::MAX),
        sampled_rows: rows,
        sample: values,
        extra_bytes: shape::extra_bytes(kernel, shape, dtype),
        total_bytes: shape::total_bytes(kernel, shape, dtype),
        timing,
    })
}

/// One submission of the kernel's dispatches in one compute pass; its duration in ms.
async fn timed_submission(
    gpu: &Gpu,
    prepared: &Prepared,
    timing: Timing,
    now_ms: &dyn Fn() -> f64,
) -> Result<f64, GpuError> {
    let device = &gpu.device;
    let queries = (timing == Timing::Gpu).then(|| {
        let set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps-read"),
            size: 16,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        (set, resolve, read)
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("attention"),
            timestamp_writes: queries.as_ref().map(|(set, _, _)| {
                wgpu::ComputePassTimestampWrites {
                    query_set: set,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }
            }),
        });
        pass.set_bind_group(0, &prepared.bind_group, &[]);
        // Dispatches of one pass run in order, each seeing the previous one's writes.
        for (pipeline, [x, y, z]) in &prepared.kernels {
            pass.set_pipeline(pipeline);
            pass.dispatch_workgroups(*x, *y, *z);
        }
    }
    if let Some((set, resolve, read)) = &queries {
        encoder.resolve_query_set(set, 0..2, resolve, 0);
        encoder.copy_buffer_to_buffer(resolve, 0, read, 0, 16);
    }
    let start = now_ms();
    gpu.queue.submit([encoder.finish()]);
    gpu.finish().await?;
    let wall = now_ms() - start;
    match &queries {
        Some((_, _, read)) => {
            let bytes = gpu.map_read(read).await?;
            let ticks = bytemuck::pod_collect_to_vec::<u8, u64>(&bytes);
            let (Some(&begin), Some(&end)) = (ticks.first(), ticks.get(1)) else {
                return Ok(wall);
            };
            let ns = end.saturating_sub(begin) as f64 * f64::from(gpu.queue.get_timestamp_period());
            // Some drivers report zeros for passes they time poorly: fall back.
            Ok(if ns > 0.0 { ns / 1e6 } else { wall })
        }
        None => Ok(wall),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        assert_eq!(median(&[f64::NAN, 1.0]), 1.0);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let v = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 9.0, 8.0, 7.0, 6.0];
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 90.0), 9.0);
        assert_eq!(percentile(&v, 100.0), 10.0);
        assert_eq!(percentile(&[3.0], 90.0), 3.0);
        assert!(percentile(&[], 50.0).is_nan());
        assert_eq!(percentile(&[f64::NAN, 2.0], 90.0), 2.0);
    }

    #[test]
    fn sampled_rows_fit_the_budget_and_include_the_ends() {
        let small = Shape::new(1, 2, 64, 64, false);
        let all = sample_rows(&small, u64::MAX);
        assert_eq!(all, (0..128).collect::<Vec<_>>());
        let big = Shape::new(1, 8, 65_536, 128, true);
        let some = sample_rows(&big, 50_000_000);
        assert_eq!(some.len(), 2);
        assert_eq!(some, vec![0, 8 * 65_536 - 1]);
        let tiny_budget = sample_rows(&big, 1);
        assert_eq!(tiny_budget, vec![8 * 65_536 - 1]);
    }
}
