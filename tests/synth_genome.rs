//! The synthetic genome of `examples/synth_genome.rs` (its layout in `examples/synth/genome.rs`):
//! repeat 0 is the sources' records as they are, the later repeats differ from them only by
//! base substitutions at about one per 1,024 bases, any byte range regenerated alone equals
//! the same bytes of the stream, the same inputs give the same bytes, and the output is FASTA
//! that the crate's samtools-compatible indexer (and, ignored unless asked for, samtools
//! itself) indexes without a warning.

#[allow(dead_code)]
#[path = "../examples/synth/genome.rs"]
mod genome;

use aceapex::fasta::FastaIndex;
use genome::Synth;
use std::process::Command;

/// A small xorshift generator for the test's random ranges.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Three hand-made records (a description after the name, N and lower case, CR line ends,
/// ragged lines, a name used twice) and the golden DNA sample.
fn sources() -> Vec<(&'static str, Vec<u8>)> {
    let a = b">chrA some description\nACGTNNA\nacgtacg\nTTTTGGG\nACG\n".to_vec();
    let b = b">chrB\r\nGGCCA\r\nTTAC\r\n\r\nAAAAACCC\r\n>chrA\nNNNNNNNNNNACGT\n".to_vec();
    let golden = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/dna.fa"))
        .expect("tests/golden/dna.fa");
    vec![("a.fa", a), ("b.fa", b), ("dna.fa", golden)]
}

/// What the test expects of each source record: (name in the output, bases, line width),
/// written out by hand for the hand-made records, read from the golden file for the last.
fn expected_records() -> Vec<(String, Vec<u8>, usize)> {
    let golden = &sources()[2].1;
    let text = std::str::from_utf8(golden).unwrap();
    let mut lines = text.lines();
    let name = lines.next().unwrap()[1..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let seq: Vec<&str> = lines.collect();
    vec![
        ("chrA".into(), b"ACGTNNAacgtacgTTTTGGGACG".to_vec(), 7),
        ("chrB".into(), b"GGCCATTACAAAAACCC".to_vec(), 5),
        ("chrA.2".into(), b"NNNNNNNNNNACGT".to_vec(), 14),
        (name, seq.concat().into_bytes(), seq[0].len()),
    ]
}

fn synth(size: u64, seed: u64) -> Synth {
    let s = sources();
    let refs: Vec<(&str, &[u8])> = s.iter().map(|(l, t)| (*l, &t[..])).collect();
    Synth::new(&refs, size, seed).unwrap()
}

fn stream(s: &Synth, threads: usize, chunk: usize) -> Vec<u8> {
    let mut out = Vec::new();
    s.write_to(&mut out, threads, chunk).unwrap();
    out
}

/// The stream's records, parsed naively: (header without '>', line lengths, bases).
fn parse(out: &[u8]) -> Vec<(String, Vec<usize>, Vec<u8>)> {
    assert_eq!(out.last(), Some(&b'\n'), "the output ends with a line end");
    let mut recs: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for line in out[..out.len() - 1].split(|&b| b == b'\n') {
        if let Some(h) = line.strip_prefix(b">") {
            recs.push((String::from_utf8(h.to_vec()).unwrap(), vec![], vec![]));
        } else {
            let r = recs.last_mut().expect("sequence before the first header");
            r.1.push(line.len());
            r.2.extend_from_slice(line);
        }
    }
    recs
}

#[test]
fn repeats_are_the_sources_with_sparse_substitutions() {
    let want = expected_records();
    let s = synth(2 << 20, 7);
    let out = stream(&s, 2, 4096);
    assert_eq!(out.len() as u64, s.len());
    assert!(s.len() <= 2 << 20);
    let recs = parse(&out);
    assert!(recs.len() > 4 * 30, "{} records", recs.len());
    let (mut bases, mut diffs) = (0u64, 0u64);
    for (k, (header, lines, seq)) in recs.iter().enumerate() {
        let rep = k / want.len();
        let (name, src, width) = &want[k % want.len()];
        assert_eq!(header, &format!("rep{rep}_{name}"));
        // full lines but the last, which is not longer
        let last = lines.len() - 1;
        assert!(
            lines[..last].iter().all(|l| l == width),
            "{header}: {lines:?}"
        );
        assert!(
            lines[last] <= *width && lines[last] > 0,
            "{header}: {lines:?}"
        );
        if k + 1 < recs.len() {
            assert_eq!(seq.len(), src.len(), "{header}");
        } else {
            // the last record may be cut, at a line end
            assert!(seq.len() <= src.len() && !seq.is_empty(), "{header}");
        }
        for (i, (&got, &orig)) in seq.iter().zip(src).enumerate() {
            if got == orig {
                continue;
            }
            assert!(rep > 0, "{header}: repeat 0 changed at base {i}");
            assert!(
                b"ACGTacgt".contains(&orig) && b"ACGTacgt".contains(&got),
                "{header} base {i}: {} -> {}",
                orig as char,
                got as char
            );
            assert_eq!(
                orig.is_ascii_lowercase(),
                got.is_ascii_lowercase(),
                "{header} base {i}: case changed"
            );
            diffs += 1;
        }
        if rep > 0 {
            bases += seq.len() as u64;
        }
    }
    // one substitution per 1,024 bases on average (0, 1, 1 or 2 per run of 1,024)
    let expected = bases as f64 / 1024.0;
    assert!(
        (diffs as f64) > 0.8 * expected && (diffs as f64) < 1.2 * expected,
        "{diffs} substitutions in {bases} bases"
    );
}

#[test]
fn bytes_at_equals_the_stream() {
    let s = synth(3 << 20, 11);
    let out = stream(&s, 3, 1000);
    let len = out.len() as u64;
    let mut got = vec![0u8; 70_000];
    let mut check = |o: u64, l: u64| {
        let l = l.min(len - o);
        s.bytes_at(o, &mut got[..l as usize]);
        assert!(
            got[..l as usize] == out[o as usize..(o + l) as usize],
            "bytes {o}+{l} differ"
        );
    };
    check(0, 70_000);
    check(len - 1, 1);
    check(len - 70_000, 70_000);
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..3_000 {
        let o = rng.below(len);
        check(o, 1 + rng.below(70_000));
    }
    // around every header (repeat and record boundaries) and many line ends
    let mut lines = 0;
    for (i, &b) in out.iter().enumerate() {
        let i = i as u64;
        if b == b'>' || (b == b'\n' && rng.below(64) == 0) {
            lines += 1;
            for d in 0..4u64 {
                let o = i.saturating_sub(d);
                check(o, 1 + d + rng.below(200));
            }
        }
    }
    assert!(lines > 1_000);
}

#[test]
fn same_inputs_same_bytes() {
    let one = stream(&synth(1 << 20, 5), 1, 1 << 20);
    assert_eq!(one, stream(&synth(1 << 20, 5), 4, 333));
    // another seed moves the substitutions, not repeat 0 or the layout
    let other = stream(&synth(1 << 20, 6), 2, 4096);
    assert_eq!(one.len(), other.len());
    assert_ne!(one, other);
    let rep1 = one.windows(6).position(|w| w == b">rep1_").unwrap();
    assert_eq!(one[..rep1], other[..rep1]);
    let mask = |v: &[u8]| -> Vec<u8> {
        v.iter()
            .map(|b| if b"ACGTacgt".contains(b) { b'.' } else { *b })
            .collect()
    };
    assert_eq!(mask(&one), mask(&other));
}

#[test]
fn size_cut_at_a_line_end() {
    let full_rep = synth(1 << 20, 1).repeat_bytes();
    // ">rep0_chrA\n" (11) + 4 lines (8 + 8 + 8 + 4): a size inside the third line
    let s = synth(11 + 8 + 8 + 5, 1);
    assert_eq!(s.len(), 11 + 8 + 8);
    let out = stream(&s, 1, 7);
    assert_eq!(&out[..], b">rep0_chrA\nACGTNNA\nacgtacg\n");
    // a size inside the second record's header: the first record only
    let s = synth(11 + 28 + 3, 1);
    assert_eq!(s.len(), 11 + 28);
    // too small for a header and a line
    let src = sources();
    let refs: Vec<(&str, &[u8])> = src.iter().map(|(l, t)| (*l, &t[..])).collect();
    assert!(Synth::new(&refs, 15, 1).is_err());
    assert!(Synth::new(&[("empty.fa", b">x\n\n")], 1 << 20, 1).is_err());
    assert!(Synth::new(&[("bad.fa", b"ACGT\n")], 1 << 20, 1).is_err());
    assert!(full_rep > 60_000);
}

/// The `.fai` of the stream, computed from its naive parse: name, length, offset of the
/// first base, bases and bytes per line.
fn expected_fai(out: &[u8]) -> String {
    let mut fai = String::new();
    let mut at = 0usize;
    for (header, lines, seq) in parse(out) {
        at += header.len() + 2;
        fai += &format!(
            "{header}\t{}\t{at}\t{}\t{}\n",
            seq.len(),
            lines[0],
            lines[0] + 1
        );
        at += lines.iter().map(|l| l + 1).sum::<usize>();
    }
    fai
}

#[test]
fn output_is_indexable_fasta() {
    let out = stream(&synth(1 << 20, 3), 2, 10_000);
    let (index, warnings) = FastaIndex::build_with_warnings(&out).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        String::from_utf8(index.to_fai()).unwrap(),
        expected_fai(&out)
    );
}

#[test]
#[ignore = "needs samtools on PATH: cargo test --release --test synth_genome -- --ignored"]
fn samtools_indexes_the_output() {
    let s = synth(1 << 20, 3);
    let out = stream(&s, 2, 10_000);
    let dir = tempfile::tempdir().unwrap();
    let fa = dir.path().join("synth.fa");
    std::fs::write(&fa, &out).unwrap();
    let st = Command::new("samtools")
        .arg("faidx")
        .arg(&fa)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    assert!(
        st.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let fai = std::fs::read_to_string(dir.path().join("synth.fa.fai")).unwrap();
    assert_eq!(fai, expected_fai(&out));
    // a region of a mutated repeat, as samtools reads it, is the stream's bases
    let recs = parse(&out);
    let (name, _, seq) = &recs[4 * 3 + 3];
    let q = Command::new("samtools")
        .arg("faidx")
        .arg(&fa)
        .arg(format!("{name}:1001-3000"))
        .output()
        .unwrap();
    assert!(q.status.success());
    let text = String::from_utf8(q.stdout).unwrap();
    let got: String = text.lines().skip(1).collect();
    assert_eq!(got.as_bytes(), &seq[1000..3000]);
}
