//! A spy around a real provider, a `seam::Layer` (what it does not override is forwarded
//! unchanged): it counts the calls the tools' budgets are about (stat, read_text, stream_text).
//! Optionally it hides file sizes, as a backend that cannot tell them would (the read tool must
//! then stream), or its search, as a backend that offers none would.

use seam::{FileSystem, FsError, FsInfo, FsTarget, Layer, Signal, TextStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Default, Debug)]
pub struct Counts {
    pub stat: AtomicUsize,
    pub read_text: AtomicUsize,
    pub stream_text: AtomicUsize,
    pub read_bytes: AtomicUsize,
}

impl Counts {
    pub fn get(&self) -> (usize, usize, usize) {
        (
            self.stat.load(Ordering::SeqCst),
            self.read_text.load(Ordering::SeqCst),
            self.stream_text.load(Ordering::SeqCst),
        )
    }

    pub fn reset(&self) {
        self.stat.store(0, Ordering::SeqCst);
        self.read_text.store(0, Ordering::SeqCst);
        self.stream_text.store(0, Ordering::SeqCst);
        self.read_bytes.store(0, Ordering::SeqCst);
    }
}

pub struct Counting {
    pub inner: Arc<dyn FileSystem>,
    pub counts: Arc<Counts>,
    pub hide_sizes: bool,
    pub hide_search: bool,
}

#[async_trait::async_trait]
impl Layer for Counting {
    fn inner(&self) -> &dyn FileSystem {
        self.inner.as_ref()
    }
    fn search(&self) -> Option<&dyn seam::Search> {
        if self.hide_search {
            None
        } else {
            self.inner.search()
        }
    }
    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        self.counts.stat.fetch_add(1, Ordering::SeqCst);
        let info = self.inner.stat(target, signal).await?;
        Ok(info.map(|mut i| {
            if self.hide_sizes {
                i.size = None;
            }
            i
        }))
    }
    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        self.counts.read_text.fetch_add(1, Ordering::SeqCst);
        self.inner.read_text(target, signal).await
    }
    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        self.counts.stream_text.fetch_add(1, Ordering::SeqCst);
        self.inner.stream_text(target, signal).await
    }
    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        self.counts.read_bytes.fetch_add(1, Ordering::SeqCst);
        self.inner.read_bytes(target, max_bytes, signal).await
    }
}
