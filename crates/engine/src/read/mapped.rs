//! A regular file read through a memory map: the whole file is the
//! reader's buffer, so every line is lent straight from the page cache
//! (no `read` calls, no copy into a buffer, no line that straddles two
//! buffers and has to be copied piece by piece).
//!
//! The map is taken of the file's length when it is opened: lines appended
//! later are not read (a `read` loop would see them). A file truncated
//! while it is mapped would fault, so only files that are appended to, not
//! rewritten, belong here: `read::source` maps plain JSONL files of some
//! size and reads everything else (documents, compressed files, archives,
//! FIFOs) with `read`.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memmap2::Mmap;
#[cfg(unix)]
use memmap2::{Advice, UncheckedAdvice};

/// Pages behind the read position are dropped from the process (not from
/// the page cache) this many bytes at a time, so the resident size stays
/// that of a buffered reader however large the file is.
#[cfg(unix)]
const RELEASE_BYTES: usize = 2 << 20;
#[cfg(unix)]
const RELEASE_ALIGN: usize = 64 << 10;

/// A mapped file and how far it has been read.
pub struct MappedFile {
    map: Mmap,
    pos: usize,
    /// Start of the part of the map still resident (page-aligned).
    released: usize,
    bytes_read: Option<Arc<AtomicU64>>,
}

impl MappedFile {
    /// Maps `file` when it is a regular file with something in it; `None`
    /// when it cannot be mapped (a FIFO, a device, an empty file, a file
    /// system without mappings, a system other than Unix, where the pages
    /// read are not dropped as the read moves on): read it with `read`.
    pub fn open(file: &File, bytes_read: Option<Arc<AtomicU64>>) -> Option<MappedFile> {
        if !cfg!(unix) {
            return None;
        }
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() == 0 {
            return None;
        }
        // SAFETY: the map is only read. Another process that changes the
        // file changes what is read (as with `read`); one that truncates it
        // makes a read past the new end fault, the documented risk of
        // mapping (see the module's doc).
        let map = unsafe { Mmap::map(file) }.ok()?;
        // Read once, front to back: the kernel reads ahead further.
        #[cfg(unix)]
        let _ = map.advise(Advice::Sequential);
        Some(MappedFile {
            map,
            pos: 0,
            released: 0,
            bytes_read,
        })
    }

    /// The whole file.
    pub fn text(&self) -> &[u8] {
        &self.map
    }

    #[cfg(not(unix))]
    fn release_behind(&mut self) {}

    #[cfg(unix)]
    fn release_behind(&mut self) {
        // Whole 64 KiB blocks (a multiple of every usual page size): the
        // page holding `pos` stays.
        let end = self.pos & !(RELEASE_ALIGN - 1);
        if end < self.released + RELEASE_BYTES {
            return;
        }
        // SAFETY: a shared, read-only map of a file: a dropped page is read
        // again from the file if touched (nothing is lost), and nothing
        // before `pos` is lent out any more (`fill_buf`'s borrow ended).
        let _ = unsafe {
            self.map.unchecked_advise_range(
                UncheckedAdvice::DontNeed,
                self.released,
                end - self.released,
            )
        };
        self.released = end;
    }
}

impl Read for MappedFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let rest = self.fill_buf()?;
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for MappedFile {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        Ok(&self.map[self.pos..])
    }

    fn consume(&mut self, amount: usize) {
        let amount = amount.min(self.map.len() - self.pos);
        self.pos += amount;
        if let Some(count) = &self.bytes_read {
            count.fetch_add(amount as u64, Ordering::Relaxed);
        }
        self.release_behind();
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp_file(bytes: &[u8]) -> (std::path::PathBuf, File) {
        let dir = std::env::temp_dir().join(format!("mirotrace-mapped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join(format!("{}.jsonl", bytes.len()));
        File::create(&path)
            .and_then(|mut f| f.write_all(bytes))
            .expect("write");
        let file = File::open(&path).expect("open");
        (path, file)
    }

    #[test]
    fn reads_every_byte_and_counts_it() {
        let bytes: Vec<u8> = (0..3 * RELEASE_BYTES + 17)
            .map(|i| (i % 251) as u8)
            .collect();
        let (path, file) = temp_file(&bytes);
        let count = Arc::new(AtomicU64::new(0));
        let mut mapped = MappedFile::open(&file, Some(count.clone())).expect("maps");
        let mut back = Vec::new();
        // Small reads and large consumes alike.
        let mut small = [0u8; 1000];
        let n = mapped.read(&mut small).expect("read");
        back.extend_from_slice(&small[..n]);
        loop {
            let chunk = mapped.fill_buf().expect("fill");
            if chunk.is_empty() {
                break;
            }
            let take = chunk.len().min(RELEASE_BYTES / 3 + 5);
            back.extend_from_slice(&chunk[..take]);
            mapped.consume(take);
        }
        assert_eq!(back, bytes);
        assert_eq!(count.load(Ordering::Relaxed), bytes.len() as u64);
        assert!(mapped.released > 0, "pages behind were released");
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn an_empty_file_is_not_mapped() {
        let (path, file) = temp_file(b"");
        assert!(MappedFile::open(&file, None).is_none());
        let _ = std::fs::remove_file(path);
    }
}
