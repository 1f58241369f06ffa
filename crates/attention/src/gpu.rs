//! Connecting to a GPU through wgpu, the same code on native and on the web.

use std::fmt;

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

/// An open device with its queue and the adapter it came from.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterSummary,
    pub limits: wgpu::Limits,
}

impl Gpu {
    /// Opens the best adapter: a high-performance one first, the fallback (software)
    /// adapter second, so headless browsers with SwiftShader and machines with
    /// lavapipe still run. Native honours `WGPU_BACKEND` and `WGPU_ADAPTER_NAME`.
    pub async fn connect() -> Result<Gpu, GpuError> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let mut last_error = String::from("sin detalles");
        let mut adapter = None;
        for fallback in [false, true] {
            let options = wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: fallback,
                ..Default::default()
            };
            match instance.request_adapter(&options).await {
                Ok(a) => {
                    adapter = Some(a);
                    break;
                }
                Err(e) => last_error = e.to_string(),
            }
        }
        let adapter = adapter.ok_or(GpuError::NoAdapter(last_error))?;
        let info = adapter.get_info();
        // Ask for everything the adapter offers: kernels size their tiles from these.
        let limits = adapter.limits();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("vramlab"),
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::Device(e.to_string()))?;
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
        })
    }

    /// Copies `buffer` into a mappable staging buffer and reads it back as `f32`s.
    ///
    /// A storage buffer cannot be mapped directly on every backend, hence the staging
    /// copy. On native `poll` blocks until the GPU is done; on the web `poll` does
    /// nothing and the browser resolves the map callback from its event loop, which is
    /// why the result travels through a channel that both sides can await.
    pub async fn read_f32(&self, buffer: &wgpu::Buffer) -> Result<Vec<f32>, GpuError> {
        let size = buffer.size();
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("staging"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
        self.queue.submit([encoder.finish()]);

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
        let values = bytemuck::pod_collect_to_vec::<u8, f32>(&data);
        drop(data);
        staging.unmap();
        Ok(values)
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
