//! Stopping a run: the user's cancel and the device's loss, as one signal
//! that the runner checks between steps and races every step against, so a
//! step waiting on a lost device never freezes the page.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// Why a run stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The user pressed Cancel.
    Cancelled,
    /// The device was lost (destroyed, reset by the driver, or the browser
    /// reclaimed it), with the browser's message.
    DeviceLost(String),
}

#[derive(Debug, Default)]
struct Inner {
    stop: Option<Stop>,
    wakers: Vec<Waker>,
}

/// A shared, clonable stop flag; the first [`StopSignal::stop`] wins.
#[derive(Clone, Debug, Default)]
pub struct StopSignal {
    inner: Arc<Mutex<Inner>>,
}

impl StopSignal {
    /// A signal that has not stopped.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A poisoned lock only means a panic elsewhere; the flag is still valid.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops for `why`, unless already stopped, and wakes whatever races it.
    pub fn stop(&self, why: Stop) {
        let wakers = {
            let mut inner = self.lock();
            if inner.stop.is_some() {
                return;
            }
            inner.stop = Some(why);
            std::mem::take(&mut inner.wakers)
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Why it stopped, if it has.
    pub fn stopped(&self) -> Option<Stop> {
        self.lock().stop.clone()
    }

    /// Runs `work` until it finishes or the signal stops, whichever is first.
    /// A stopped `work` is dropped; GPU work already submitted finishes on
    /// its own and its results are ignored.
    ///
    /// # Errors
    ///
    /// The [`Stop`] if the signal stopped first (or had already stopped).
    pub async fn race<T>(&self, work: impl Future<Output = T>) -> Result<T, Stop> {
        Race {
            signal: self.clone(),
            work: Box::pin(work),
        }
        .await
    }
}

/// The future behind [`StopSignal::race`].
struct Race<F> {
    signal: StopSignal,
    work: Pin<Box<F>>,
}

impl<F: Future> Future for Race<F> {
    type Output = Result<F::Output, Stop>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(stop) = self.signal.stopped() {
            return Poll::Ready(Err(stop));
        }
        if let Poll::Ready(output) = self.work.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        let mut inner = self.signal.lock();
        // Stopped while `work` was polled: report it now rather than wait.
        if let Some(stop) = inner.stop.clone() {
            return Poll::Ready(Err(stop));
        }
        if !inner.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            inner.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::{Stop, StopSignal};
    use std::future::pending;

    #[test]
    fn race_returns_the_work_when_nothing_stops_it() {
        let signal = StopSignal::new();
        assert_eq!(pollster::block_on(signal.race(async { 7 })), Ok(7));
    }

    #[test]
    fn race_stops_pending_work_when_cancelled_from_another_thread() {
        let signal = StopSignal::new();
        let remote = signal.clone();
        let handle = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            remote.stop(Stop::DeviceLost("gone".into()));
        });
        let result = pollster::block_on(signal.race(pending::<()>()));
        assert_eq!(result, Err(Stop::DeviceLost("gone".into())));
        assert!(handle.join().is_ok());
    }

    #[test]
    fn the_first_stop_wins() {
        let signal = StopSignal::new();
        signal.stop(Stop::Cancelled);
        signal.stop(Stop::DeviceLost("later".into()));
        assert_eq!(signal.stopped(), Some(Stop::Cancelled));
        assert_eq!(
            pollster::block_on(signal.race(async { 1 })),
            Err(Stop::Cancelled)
        );
    }
}
