//! The region readers aceapex's `Reader` is compared with, shared by `benches/region.rs` and
//! `examples/region_latency.rs`: seekable-style zstd (independent frames of one block size
//! each, with an offset index) and htslib's `faidx_fetch_seq` on a bgzip'd FASTA (libhts
//! loaded at run time, so that neither needs htslib's headers or a build-time link).

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

/// Original data cut into independent zstd frames of `frame` bytes (each with its content
/// checksum, which the decoder verifies: the counterpart of aceapex's block checksums), and
/// the frames' offsets.
pub struct ZstdSeekable {
    frames: Vec<u8>,
    /// `starts[i]..starts[i + 1]` is frame `i`.
    starts: Vec<usize>,
    frame: usize,
    size: u64,
}

thread_local! {
    static ZSTD: RefCell<(zstd::bulk::Decompressor<'static>, Vec<u8>)> = RefCell::new((
        zstd::bulk::Decompressor::new().expect("zstd context"),
        Vec::new(),
    ));
}

impl ZstdSeekable {
    /// Compresses `data` in frames of `frame` bytes at zstd `level` (the frames in parallel).
    pub fn new(data: &[u8], frame: usize, level: i32) -> ZstdSeekable {
        use rayon::prelude::*;
        let parts: Vec<Vec<u8>> = data
            .par_chunks(frame)
            .map_init(
                || {
                    let mut c = zstd::bulk::Compressor::new(level).expect("zstd context");
                    c.include_checksum(true).expect("checksum flag");
                    c
                },
                |c, chunk| c.compress(chunk).expect("zstd compresses"),
            )
            .collect();
        let mut starts = vec![0];
        let mut frames = Vec::new();
        for p in &parts {
            frames.extend_from_slice(p);
            starts.push(frames.len());
        }
        ZstdSeekable {
            frames,
            starts,
            frame,
            size: data.len() as u64,
        }
    }

    /// Compressed size in bytes (frames and an 8-byte offset per frame).
    pub fn compressed_len(&self) -> usize {
        self.frames.len() + 8 * self.starts.len()
    }

    /// Fills `buf` with original bytes `offset..offset + buf.len()`: decompresses every frame
    /// the range touches into a per-thread buffer and copies the part asked for.
    pub fn read_range(&self, offset: u64, buf: &mut [u8]) {
        assert!(
            offset + buf.len() as u64 <= self.size,
            "range inside the data"
        );
        if buf.is_empty() {
            return;
        }
        let f = self.frame as u64;
        let end = offset + buf.len() as u64;
        ZSTD.with(|z| {
            let (dctx, scratch) = &mut *z.borrow_mut();
            scratch.resize(self.frame, 0);
            let mut done = 0usize;
            for i in (offset / f) as usize..=((end - 1) / f) as usize {
                let src = &self.frames[self.starts[i]..self.starts[i + 1]];
                let n = dctx
                    .decompress_to_buffer(src, &mut scratch[..])
                    .expect("zstd frame decodes");
                let start = i as u64 * f;
                let lo = (offset.max(start) - start) as usize;
                let hi = (end.min(start + n as u64) - start) as usize;
                buf[done..done + hi - lo].copy_from_slice(&scratch[lo..hi]);
                done += hi - lo;
            }
        })
    }
}

type FaiLoad = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type FaiBuild = unsafe extern "C" fn(*const c_char) -> c_int;
type FaiDestroy = unsafe extern "C" fn(*mut c_void);
type FaidxFetchSeq =
    unsafe extern "C" fn(*const c_void, *const c_char, c_int, c_int, *mut c_int) -> *mut c_char;
type BgzfOpen = unsafe extern "C" fn(*const c_char, *const c_char) -> *mut c_void;
type BgzfWrite = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> isize;
type BgzfClose = unsafe extern "C" fn(*mut c_void) -> c_int;

/// Where libhts is looked for.
pub const LIBHTS: &str = "libhts.so.3";

/// A bgzip'd FASTA file opened with htslib's `fai_load`, read by `faidx_fetch_seq`.
pub struct Hts {
    fai: *mut c_void,
    fetch: FaidxFetchSeq,
    destroy: FaiDestroy,
    /// The first sequence's name.
    name: CString,
    _lib: libloading::Library,
}

impl Hts {
    /// Writes `fasta` bgzip-compressed (htslib's BGZF writer at its default level, as
    /// `bgzip` does) to `dir/ref.fa.gz`, indexes it (`fai_build`: the `.fai` and `.gzi` that
    /// `samtools faidx` writes) and opens it; `seq_name` is the sequence regions are read from.
    /// An error (a message) when libhts cannot be loaded or a step fails.
    pub fn build(fasta: &[u8], dir: &Path, seq_name: &str) -> Result<Hts, String> {
        // SAFETY: loading libhts runs its initialisers, which have no preconditions.
        let lib = unsafe { libloading::Library::new(LIBHTS) }
            .map_err(|e| format!("{LIBHTS} not loaded ({e})"))?;
        // SAFETY: the symbols are htslib's, declared with the signatures of its headers
        // (htslib/faidx.h, htslib/bgzf.h); the pointers are used while `lib` lives (kept in
        // the returned value).
        unsafe {
            let sym = |name: &[u8]| -> Result<*const c_void, String> {
                lib.get::<*const c_void>(name)
                    .map(|s| *s)
                    .map_err(|e| format!("{}: {e}", String::from_utf8_lossy(name)))
            };
            let bgzf_open: BgzfOpen = std::mem::transmute(sym(b"bgzf_open")?);
            let bgzf_write: BgzfWrite = std::mem::transmute(sym(b"bgzf_write")?);
            let bgzf_close: BgzfClose = std::mem::transmute(sym(b"bgzf_close")?);
            let fai_build: FaiBuild = std::mem::transmute(sym(b"fai_build")?);
            let fai_load: FaiLoad = std::mem::transmute(sym(b"fai_load")?);
            let fetch: FaidxFetchSeq = std::mem::transmute(sym(b"faidx_fetch_seq")?);
            let destroy: FaiDestroy = std::mem::transmute(sym(b"fai_destroy")?);
            let path = dir.join("ref.fa.gz");
            let c_path =
                CString::new(path.to_string_lossy().into_owned()).map_err(|e| e.to_string())?;
            let fp = bgzf_open(c_path.as_ptr(), c"w".as_ptr());
            if fp.is_null() {
                return Err(format!("bgzf_open {} failed", path.display()));
            }
            let written = bgzf_write(fp, fasta.as_ptr().cast(), fasta.len());
            if bgzf_close(fp) != 0 || written != fasta.len() as isize {
                return Err(format!("writing {} failed", path.display()));
            }
            if fai_build(c_path.as_ptr()) != 0 {
                return Err(format!("fai_build {} failed", path.display()));
            }
            let fai = fai_load(c_path.as_ptr());
            if fai.is_null() {
                return Err(format!("fai_load {} failed", path.display()));
            }
            Ok(Hts {
                fai,
                fetch,
                destroy,
                name: CString::new(seq_name).map_err(|e| e.to_string())?,
                _lib: lib,
            })
        }
    }

    /// The bases `beg..beg + len` (0-based) of the sequence, as `faidx_fetch_seq` returns
    /// them (a string htslib allocates; copied into `out`, then freed).
    pub fn fetch(&self, beg: u64, len: usize, out: &mut Vec<u8>) {
        let mut got: c_int = 0;
        // SAFETY: `fai` is a loaded index, `name` a NUL-terminated string; the result is a
        // NUL-terminated malloc'd string of `got` bases (or null on error), freed below.
        unsafe {
            let s = (self.fetch)(
                self.fai,
                self.name.as_ptr(),
                beg as c_int,
                (beg + len as u64 - 1) as c_int,
                &mut got,
            );
            assert!(
                !s.is_null() && got as usize == len,
                "faidx_fetch_seq failed"
            );
            out.clear();
            out.extend_from_slice(CStr::from_ptr(s).to_bytes());
            libc::free(s.cast());
        }
    }
}

impl Drop for Hts {
    fn drop(&mut self) {
        // SAFETY: `fai` came from fai_load and is destroyed once.
        unsafe { (self.destroy)(self.fai) }
    }
}

/// One sequence of a FASTA file: where its bases lie, so that base positions give the byte
/// ranges aceapex and zstd read (the same regions of the file).
pub struct Layout {
    pub name: String,
    /// Bases in the sequence.
    pub length: u64,
    /// Byte offset of its first base.
    pub offset: u64,
    pub line_bases: u64,
    pub line_width: u64,
}

impl Layout {
    /// The first sequence of `fasta` (its `.fai` record).
    pub fn first(fasta: &[u8]) -> Result<Layout, String> {
        let index = aceapex::fasta::FastaIndex::build(fasta).map_err(|e| e.to_string())?;
        let r = index.records().first().ok_or("no sequence")?;
        Ok(Layout {
            name: r.name_lossy().into_owned(),
            length: r.length,
            offset: r.offset,
            line_bases: u64::from(r.line_bases),
            line_width: u64::from(r.line_width),
        })
    }

    /// Byte offset of base `pos` (0-based).
    pub fn byte_of(&self, pos: u64) -> u64 {
        self.offset + pos / self.line_bases * self.line_width + pos % self.line_bases
    }
}
