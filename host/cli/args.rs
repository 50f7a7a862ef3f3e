//! Value parsers of the command-line arguments (sizes, levels, thread counts) and the help
//! text they share.

use aceapex::device::format::{MAX_BLOCK_SIZE, MIN_BLOCK_SIZE, MIN_MATCH_BASE};

/// The help note on size arguments, naming the options `$flags` takes it for (a literal).
macro_rules! sizes_help {
    ($flags:literal) => {
        concat!(
            "Sizes (",
            $flags,
            "): bytes, or a number with a suffix\n",
            "(case-insensitive): K, KiB = 1024; M, MiB = 1024^2; G, GiB = 1024^3; T, TiB = 1024^4 \
             (binary);\n",
            "KB = 1000; MB = 1000^2; GB = 1000^3; TB = 1000^4 (decimal). So 16K = 16KiB = 16384, \
             16KB = 16000."
        )
    };
}
pub(crate) use sizes_help;

/// A size in bytes: digits with an optional suffix (see `sizes_help!`).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits);
    let mul: u64 = match suffix.trim_start().to_ascii_lowercase().as_str() {
        _ if num.is_empty() => 0,
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => 0,
    };
    if mul == 0 {
        return Err(format!(
            "'{s}' is not a size: use bytes, or a number with a suffix K, KiB, KB, M, MiB, MB, G, \
             GiB, GB, T, TiB, TB (e.g. 16K, 1MiB, 500MB)"
        ));
    }
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("'{s}' is too large"))
}

pub fn parse_block_size(s: &str) -> Result<u32, String> {
    let v = parse_size(s)?;
    if !v.is_power_of_two() || !(MIN_BLOCK_SIZE as u64..=MAX_BLOCK_SIZE as u64).contains(&v) {
        return Err(format!(
            "{v} bytes is not a power of two from 4K to 4M (binary: 16K = 16KiB = 16384 bytes, \
             but 16KB = 16000)"
        ));
    }
    Ok(v as u32)
}

pub fn parse_window(s: &str) -> Result<u32, String> {
    match parse_size(s)? {
        0 => Err("the window must be at least 1 byte".into()),
        v => u32::try_from(v).map_err(|_| {
            format!("{v} bytes is above the largest window, 4G - 1 = 4294967295 bytes")
        }),
    }
}

/// Most worker threads `-T` accepts (more only costs memory and start-up time).
pub const MAX_THREADS: usize = 1024;

/// `--level`: 1 to 9.
pub fn parse_level(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n @ 1..=9) => Ok(n),
        _ => Err(format!(
            "'{s}' is not a level: use 1 (fastest) to 9 (smallest)"
        )),
    }
}

/// `--min-match`: 4 (the smallest match base, FORMAT.md §2) or more.
pub fn parse_min_match(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n > u32::MAX as u64 => Err(format!("{n} is too large (at most {})", u32::MAX)),
        Ok(n) if n >= MIN_MATCH_BASE as u64 => Ok(n as u32),
        Ok(n) => Err(format!(
            "{n} is below {MIN_MATCH_BASE}, the shortest match the format codes"
        )),
        Err(_) => Err(format!(
            "'{s}' is not a match length in bytes ({MIN_MATCH_BASE} or more)"
        )),
    }
}

/// `-T N`: 1 to [`MAX_THREADS`] threads, or 0 for all cores (as rayon's default).
pub fn parse_threads(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let range = format!("use 1 to {MAX_THREADS}, or 0 for all cores");
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{s}' is not a number of threads: {range}"));
    }
    match t.parse::<usize>() {
        Ok(n) if n <= MAX_THREADS => Ok(n),
        _ => Err(format!(
            "{t} threads is above the limit of {MAX_THREADS}: {range}"
        )),
    }
}
