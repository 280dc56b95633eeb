//! Copying a GPU buffer back to the host, the same way on native and on wasm.
//!
//! `Buffer::map_async` reports completion through a callback. Natively the
//! callback fires inside `Device::poll`; in a browser it fires from the event
//! loop and `Device::poll` does nothing. Awaiting a one-shot channel after
//! polling covers both, so the calling code has no `cfg` at all.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use crate::error::{BenchError, Result};

/// Reads `staging` (a `MAP_READ` buffer whose copy has been submitted) into a
/// vector of `T`, then unmaps it.
///
/// # Errors
///
/// [`BenchError::Poll`] if waiting for the device fails,
/// [`BenchError::BufferMap`] / [`BenchError::MappedRange`] if mapping fails,
/// [`BenchError::MapCallbackDropped`] if wgpu never reports the map result.
/// Waits until the GPU has finished all work submitted to `ctx`'s queue so
/// far: natively by blocking in `Device::poll`, in a browser by yielding
/// until the queue's completion callback runs.
///
/// # Errors
///
/// [`BenchError::Poll`] if waiting fails, [`BenchError::MapCallbackDropped`]
/// if the completion callback is dropped unrun (device lost).
pub(crate) async fn wait_idle(ctx: &crate::GpuContext) -> Result<()> {
    let (sender, receiver) = oneshot();
    ctx.queue().on_submitted_work_done(move || sender.send(()));
    ctx.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(BenchError::Poll)?;
    receiver.await.ok_or(BenchError::MapCallbackDropped)
}

pub(crate) async fn read_buffer<T: bytemuck::Pod>(
    device: &wgpu::Device,
    staging: &wgpu::Buffer,
) -> Result<Vec<T>> {
    let (sender, receiver) = oneshot();
    staging.map_async(wgpu::MapMode::Read, .., move |result| sender.send(result));
    // Blocks natively until the copy is done and the callback has run;
    // a no-op on the WebGPU backend.
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(BenchError::Poll)?;
    receiver
        .await
        .ok_or(BenchError::MapCallbackDropped)?
        .map_err(BenchError::BufferMap)?;

    let data = {
        let view = staging
            .get_mapped_range(..)
            .map_err(BenchError::MappedRange)?;
        // `pod_collect_to_vec` copies without requiring the mapped bytes to be
        // aligned for `T`, so it cannot panic the way `cast_slice` can.
        bytemuck::pod_collect_to_vec::<u8, T>(&view)
    };
    staging.unmap();
    Ok(data)
}

/// What a [`Receiver`] can observe.
enum Slot<T> {
    /// Nothing sent yet; holds the waker of the last poll, if any.
    Empty(Option<Waker>),
    /// The value has been sent and not yet taken.
    Full(T),
    /// The sender was dropped without sending, or the value was taken.
    Closed,
}

/// The sending half of a one-shot channel; moved into the map callback.
pub(crate) struct Sender<T> {
    slot: Arc<Mutex<Slot<T>>>,
}

/// The receiving half: a future resolving to `Some(value)`, or `None` if the
/// sender was dropped without sending.
pub(crate) struct Receiver<T> {
    slot: Arc<Mutex<Slot<T>>>,
}

/// A minimal single-value channel, so that waiting for a buffer map needs no
/// executor-specific dependency.
pub(crate) fn oneshot<T>() -> (Sender<T>, Receiver<T>) {
    let slot = Arc::new(Mutex::new(Slot::Empty(None)));
    (
        Sender {
            slot: Arc::clone(&slot),
        },
        Receiver { slot },
    )
}

impl<T> Sender<T> {
    /// Stores `value` and wakes the receiver. Dropping `self` afterwards
    /// leaves the value in place.
    pub(crate) fn send(self, value: T) {
        self.fill(Slot::Full(value));
    }

    /// Replaces an empty slot with `next` and wakes whoever waits on it.
    fn fill(&self, next: Slot<T>) {
        // A poisoned lock only means another thread panicked mid-update; the
        // slot is still a valid enum, so keep going rather than panic too.
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Slot::Empty(waker) = &mut *slot {
            let waker = waker.take();
            *slot = next;
            drop(slot);
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        // No-op after `send`, because the slot is no longer empty.
        self.fill(Slot::Closed);
    }
}

impl<T> Future for Receiver<T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        match std::mem::replace(&mut *slot, Slot::Closed) {
            Slot::Full(value) => Poll::Ready(Some(value)),
            Slot::Closed => Poll::Ready(None),
            Slot::Empty(_) => {
                *slot = Slot::Empty(Some(cx.waker().clone()));
                Poll::Pending
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::oneshot;

    #[test]
    fn oneshot_delivers_a_value_sent_before_polling() {
        let (sender, receiver) = oneshot();
        sender.send(7_u32);
        assert_eq!(pollster::block_on(receiver), Some(7));
    }

    #[test]
    fn oneshot_delivers_a_value_sent_from_another_thread() {
        let (sender, receiver) = oneshot();
        let handle = std::thread::spawn(move || sender.send("done"));
        assert_eq!(pollster::block_on(receiver), Some("done"));
        handle.join().unwrap();
    }

    #[test]
    fn oneshot_resolves_to_none_when_the_sender_is_dropped() {
        let (sender, receiver) = oneshot::<u32>();
        drop(sender);
        assert_eq!(pollster::block_on(receiver), None);
    }
}
