//! Connecting to a GPU through wgpu, the same code on native and on the web.

use std::fmt;
use std::sync::{Arc, Mutex};

/// Why a GPU run could not happen. `Display` is a Spanish sentence for the page or CLI.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error(
        "No se encontró ningún adaptador gráfico compatible (WebGPU, Vulkan, Metal o DX12): {0}"
    )]
    NoAdapter(String),
    #[error("El adaptador no pudo crear un dispositivo: {0}")]
    Device(String),
    #[error("La GPU rechazó el trabajo (error de validación): {0}")]
    Validation(String),
    #[error("La GPU se quedó sin memoria: {0}")]
    OutOfMemory(String),
    #[error("No se pudo leer el resultado de la GPU: {0}")]
    Readback(String),
    #[error(
        "Se perdió el dispositivo gráfico (reinicio del controlador o pestaña en segundo plano): {0}"
    )]
    DeviceLost(String),
    #[error("La entrada está vacía o es demasiado grande para este adaptador ({0} elementos).")]
    BadInput(usize),
}

/// What the user needs to know about the adapter a run used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
}

impl fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Browsers may hide the adapter's name for privacy; say so instead of printing
        // an empty string.
        let name = if self.name.trim().is_empty() {
            "adaptador sin nombre"
        } else {
            self.name.trim()
        };
        write!(f, "{name} ({}, {})", self.backend, self.device_type)
    }
}

/// How to pick the adapter.
#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    /// Case-insensitive substring of the adapter's name (`--adapter`); native only.
    /// `WGPU_ADAPTER_NAME` is read when this is `None`.
    pub adapter_filter: Option<String>,
}

/// What went wrong outside an error scope, recorded instead of wgpu's default panic.
#[derive(Default)]
struct Health {
    lost: Option<String>,
    uncaptured: Option<String>,
}

/// An open device with its queue and the adapter it came from.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterSummary,
    pub limits: wgpu::Limits,
    pub features: wgpu::Features,
    health: Arc<Mutex<Health>>,
}

#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
/// Orders adapters the way a benchmark wants them: a discrete GPU first, software last.
fn device_rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

impl Gpu {
    /// Opens the best adapter with default options.
    pub async fn connect() -> Result<Gpu, GpuError> {
        Self::connect_with(&ConnectOptions::default()).await
    }

    /// Opens the best adapter: natively every adapter is listed and ranked (discrete,
    /// integrated, virtual, other, CPU) after the name filter; on the web the browser
    /// picks, high-performance first, then its fallback (software) adapter, so
    /// headless browsers with SwiftShader still run. Native honours `WGPU_BACKEND`.
    pub async fn connect_with(options: &ConnectOptions) -> Result<Gpu, GpuError> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pick_adapter(&instance, options).await?;
        let info = adapter.get_info();
        // Ask for everything the adapter offers: kernels size their tiles from these.
        let limits = adapter.limits();
        let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SHADER_F16;
        let features = adapter.features() & wanted;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("vramlab"),
                required_limits: limits.clone(),
                required_features: features,
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::Device(e.to_string()))?;
        let health = Arc::new(Mutex::new(Health::default()));
        let on_error = Arc::clone(&health);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut h) = on_error.lock() {
                h.uncaptured.get_or_insert_with(|| e.to_string());
            }
        }));
        let on_lost = Arc::clone(&health);
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut h) = on_lost.lock() {
                h.lost
                    .get_or_insert_with(|| format!("{reason:?}: {message}"));
            }
        });
        Ok(Gpu {
            device,
            queue,
            adapter: AdapterSummary {
                name: info.name,
                backend: info.backend.to_string(),
                device_type: format!("{:?}", info.device_type),
                driver: format!("{} {}", info.driver, info.driver_info)
                    .trim()
                    .to_owned(),
            },
            limits,
            features,
            health,
        })
    }

    /// Whether timestamp queries can time passes on the GPU itself.
    pub fn has_timestamps(&self) -> bool {
        self.features.contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// Whether WGSL `f16` storage is available.
    pub fn has_f16(&self) -> bool {
        self.features.contains(wgpu::Features::SHADER_F16)
    }

    /// A device loss or an error that escaped every scope since the device opened.
    pub fn health(&self) -> Result<(), GpuError> {
        let Ok(h) = self.health.lock() else {
            return Ok(());
        };
        if let Some(lost) = &h.lost {
            return Err(GpuError::DeviceLost(lost.clone()));
        }
        if let Some(e) = &h.uncaptured {
            return Err(GpuError::Validation(e.clone()));
        }
        Ok(())
    }

    /// Waits until the GPU has finished everything submitted so far.
    pub async fn finish(&self) -> Result<(), GpuError> {
        let (tx, rx) = futures_channel::oneshot::channel();
        self.queue.on_submitted_work_done(move || {
            let _ = tx.send(());
        });
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::DeviceLost(e.to_string()))?;
        rx.await
            .map_err(|_| GpuError::DeviceLost("la cola se cerró".into()))?;
        self.health()
    }

    /// Copies `buffer` into a mappable staging buffer and reads it back as `f32`s.
    pub async fn read_f32(&self, buffer: &wgpu::Buffer) -> Result<Vec<f32>, GpuError> {
        let bytes = self.read_ranges(buffer, &[(0, buffer.size())]).await?;
        Ok(bytemuck::pod_collect_to_vec::<u8, f32>(&bytes))
    }

    /// Copies the `(offset, len)` byte ranges of `buffer` (each a multiple of 4) one
    /// after the other into a staging buffer and returns them.
    ///
    /// A storage buffer cannot be mapped directly on every backend, hence the staging
    /// copy. On native `poll` blocks until the GPU is done; on the web `poll` does
    /// nothing and the browser resolves the map callback from its event loop, which is
    /// why the result travels through a channel that both sides can await.
    pub async fn read_ranges(
        &self,
        buffer: &wgpu::Buffer,
        ranges: &[(u64, u64)],
    ) -> Result<Vec<u8>, GpuError> {
        let size: u64 = ranges.iter().map(|r| r.1).sum();
        if size == 0 {
            return Ok(Vec::new());
        }
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("staging"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        let mut at = 0;
        for &(offset, len) in ranges {
            encoder.copy_buffer_to_buffer(buffer, offset, &staging, at, len);
            at += len;
        }
        self.queue.submit([encoder.finish()]);
        self.map_read(&staging).await
    }

    /// Maps a `MAP_READ` buffer whose copies were submitted and returns its bytes.
    pub async fn map_read(&self, staging: &wgpu::Buffer) -> Result<Vec<u8>, GpuError> {
        let (tx, rx) = futures_channel::oneshot::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |result| {
            // The receiver only disappears if the caller was dropped; nothing to do then.
            let _ = tx.send(result);
        });
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        rx.await
            .map_err(|_| GpuError::Readback("el canal se cerró".into()))?
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        let data = staging
            .get_mapped_range(..)
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        let bytes = data.to_vec();
        drop(data);
        staging.unmap();
        Ok(bytes)
    }

    /// Runs `work` inside validation and out-of-memory error scopes and turns what the
    /// device reports into a [`GpuError`].
    pub async fn checked<T>(&self, work: impl FnOnce(&Gpu) -> T) -> Result<T, GpuError> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = work(self);
        if let Some(e) = validation.pop().await {
            // Drop order matters: scopes pop in reverse order of pushing.
            let _ = oom.pop().await;
            return Err(GpuError::Validation(e.to_string()));
        }
        if let Some(e) = oom.pop().await {
            return Err(GpuError::OutOfMemory(e.to_string()));
        }
        Ok(out)
    }
}

#[cfg(not(target_arch = "wasm32"))]
async fn pick_adapter(
    instance: &wgpu::Instance,
    options: &ConnectOptions,
) -> Result<wgpu::Adapter, GpuError> {
    let filter = options
        .adapter_filter
        .clone()
        .or_else(|| std::env::var("WGPU_ADAPTER_NAME").ok())
        .map(|f| f.trim().to_lowercase())
        .filter(|f| !f.is_empty());
    let mut adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
    let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
    if let Some(f) = &filter {
        adapters.retain(|a| a.get_info().name.to_lowercase().contains(f.as_str()));
        if adapters.is_empty() {
            return Err(GpuError::NoAdapter(format!(
                "ningún adaptador contiene «{}»; disponibles: {}",
                vram::units::clip(f),
                if names.is_empty() {
                    "ninguno".to_owned()
                } else {
                    names.join(", ")
                }
            )));
        }
    }
    adapters.sort_by_key(|a| device_rank(a.get_info().device_type));
    adapters
        .into_iter()
        .next()
        .ok_or_else(|| GpuError::NoAdapter("no hay controladores Vulkan, Metal ni DX12".into()))
}

#[cfg(target_arch = "wasm32")]
async fn pick_adapter(
    instance: &wgpu::Instance,
    _options: &ConnectOptions,
) -> Result<wgpu::Adapter, GpuError> {
    let mut last_error = String::from("sin detalles");
    for fallback in [false, true] {
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: fallback,
            ..Default::default()
        };
        match instance.request_adapter(&options).await {
            Ok(a) => return Ok(a),
            Err(e) => last_error = e.to_string(),
        }
    }
    Err(GpuError::NoAdapter(last_error))
}
