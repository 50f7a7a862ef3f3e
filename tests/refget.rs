//! Refget checksums stored at compress time (FORMAT.md §3.6) and the `aceapex serve` refget
//! server (docs/REFGET.md).
//!
//! - The checksums are compared with Python's `hashlib` over the canonical form that a
//!   separate Python parse of the FASTA text gives (letters only, uppercased).
//! - Archives of non-FASTA input are byte for byte what the encoder alone writes.
//! - The server (started on 127.0.0.1:0) answers with the bases of the original FASTA, cut
//!   out of the file by the test itself, and with the status codes of the refget
//!   specification.

use aceapex::fasta::checksums::{self, SequenceDigests};
use aceapex::format::{self, Archive, Extension};
use aceapex::{Options, Reader};
use std::process::Command;

/// A FASTA with lowercase, N runs, a header without lines (samtools does not list it), line widths 10 and 60, CRLF line ends
/// and a base that is not a letter (`*`, out of the canonical form).
fn sample_fasta() -> Vec<u8> {
    let mut f = b">s1 first\nACGTacgtNN\nACGTTGCAaa\nAC\n>s2\r\nttttGGGGcc\r\nAT\r\n>empty\n>star x\nMKV*\n".to_vec();
    f.extend_from_slice(b">long\n");
    let mut x = 12345u64;
    let bases = b"ACGTacgtNn";
    for i in 0..100_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        f.push(bases[(x >> 33) as usize % bases.len()]);
        if i % 60 == 59 {
            f.push(b'\n');
        }
    }
    f.push(b'\n');
    f
}

/// `(name, length, md5, trunc512, SQ id)` of each sequence, by Python's hashlib over its own
/// parse of `fasta`.
fn python_digests(fasta: &[u8]) -> Vec<(String, u64, String, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.fa");
    std::fs::write(&path, fasta).unwrap();
    let script = r#"
import sys, hashlib, base64
seqs, name = [], None
for line in open(sys.argv[1], 'rb').read().split(b'\n'):
    if line.startswith(b'>'):
        name = line[1:].split()[0].decode() if line[1:].split() else ''
        seqs.append([name, b'', 0])
    elif seqs:
        seqs[-1][1] += line
        seqs[-1][2] += 1
# samtools lists no sequence without a line before the next header
for name, s, lines in seqs:
    if lines == 0:
        continue
    c = bytes(b for b in s if chr(b).isascii() and chr(b).isalpha()).upper()
    sha = hashlib.sha512(c).digest()[:24]
    print(name, len(c), hashlib.md5(c).hexdigest(), sha.hex(),
          'SQ.' + base64.urlsafe_b64encode(sha).decode())
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&path)
        .output()
        .expect("python3 runs (the tests compare with its hashlib)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].to_string(),
                f[3].to_string(),
                f[4].to_string(),
            )
        })
        .collect()
}

#[test]
fn compress_stores_refget_checksums() {
    let fasta = sample_fasta();
    let archive = aceapex::compress(&fasta, &Options::default()).unwrap();
    let reader = Reader::new(&archive).unwrap();
    let index = reader.fasta_index().expect("FASTA index record");
    let digests = aceapex::sequence_checksums(&reader)
        .unwrap()
        .expect("sequence checksums record");
    let want = python_digests(&fasta);
    assert_eq!(index.len(), want.len());
    assert_eq!(digests.len(), want.len());
    for ((r, d), w) in index.records().iter().zip(&digests).zip(&want) {
        assert_eq!(r.name_lossy(), w.0);
        assert_eq!(d.length, w.1, "{}", w.0);
        assert_eq!(d.md5_hex(), w.2, "{}", w.0);
        assert_eq!(d.trunc512(), w.3, "{}", w.0);
        assert_eq!(d.ga4gh_id(), w.4, "{}", w.0);
    }
    // the letters-only length is below LENGTH where a base is not a letter
    let star = index.id(b"star").unwrap();
    assert_eq!((index.records()[star].length, digests[star].length), (4, 3));
}

#[test]
fn archive_records_are_index_then_checksums() {
    let fasta = sample_fasta();
    let archive = aceapex::compress(&fasta, &Options::default()).unwrap();
    let a = Archive::parse(&archive).unwrap();
    let kinds: Vec<(u16, u16)> = a.extensions().map(|e| (e.kind, e.flags)).collect();
    // type 1 then type 2, neither must-understand (FORMAT.md §3.5, §3.6)
    assert_eq!(kinds, [(1, 0), (2, 0)]);
    let payload = a.extensions().nth(1).unwrap().payload;
    assert_eq!(&payload[..4], b"SQC\x01");
    assert_eq!(payload.len(), 8 + 48 * 4);
    assert_eq!(aceapex::decompress(&archive).unwrap(), fasta);
}

#[test]
fn non_fasta_archives_are_unchanged() {
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/moby_dick_64k.txt"
    ))
    .unwrap();
    let fastq = b"@r1\nACGT\n+\nIIII\n@r2\nTTGA\n+\nIIII\n".repeat(50);
    for input in [&text[..], &fastq[..], b"", b"\n\n>"] {
        let opts = Options::default();
        let lib = aceapex::compress(input, &opts).unwrap();
        let enc = aceapex::encode::compress(input, &opts, &|_| {}).unwrap();
        assert_eq!(lib, enc);
        assert_eq!(Archive::parse(&lib).unwrap().extensions().count(), 0);
    }
}

#[test]
fn checksums_record_rules() {
    let fasta = sample_fasta();
    let opts = Options::default();
    let bare = aceapex::encode::compress(&fasta, &opts, &|_| {}).unwrap();
    let digests: Vec<SequenceDigests> = aceapex::sequence_checksums(
        &Reader::new(&aceapex::compress(&fasta, &opts).unwrap()).unwrap(),
    )
    .unwrap()
    .unwrap();
    // without a FASTA index record: refused
    assert!(aceapex::with_sequence_checksums(&bare, &digests).is_err());
    let index = aceapex::fasta::FastaIndex::build(&fasta).unwrap();
    let indexed = aceapex::with_fasta_index(&bare, &index).unwrap();
    // a wrong count: refused
    assert!(aceapex::with_sequence_checksums(&indexed, &digests[1..]).is_err());
    let full = aceapex::with_sequence_checksums(&indexed, &digests).unwrap();
    assert_eq!(full, aceapex::compress(&fasta, &opts).unwrap());
    // a second record: refused
    assert!(aceapex::with_sequence_checksums(&full, &digests).is_err());
    let r = Reader::new(&full).unwrap();
    assert_eq!(aceapex::sequence_checksums(&r).unwrap().unwrap(), digests);

    // hand-made records that break §3.6 are errors, never panics
    let payload = checksums::to_bytes(&digests).unwrap();
    let cases: Vec<(Vec<u8>, &[u8])> = vec![
        (bare.clone(), &payload),                      // no type-1 record
        (indexed.clone(), &payload[..100]),            // truncated
        (indexed.clone(), &payload[..8 + 48 * 3][..]), // size of 3 entries, count 4
    ];
    for (base, p) in cases {
        let a = format::with_extensions(
            &base,
            &[Extension {
                kind: 2,
                flags: 0,
                payload: p,
            }],
        )
        .unwrap();
        let err = aceapex::read_sequence_checksums(&Archive::parse(&a).unwrap());
        assert!(err.is_err(), "{err:?}");
    }
    // a length over the sequence's LENGTH
    let mut long = digests.clone();
    long[0].length += 1;
    let a = format::with_extensions(
        &indexed,
        &[Extension {
            kind: 2,
            flags: 0,
            payload: &checksums::to_bytes(&long).unwrap(),
        }],
    )
    .unwrap();
    assert!(aceapex::read_sequence_checksums(&Archive::parse(&a).unwrap()).is_err());
    // readers that skip type 2 still restore the data
    assert_eq!(aceapex::decompress(&a).unwrap(), fasta);
}
