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
    // the line layout record (type 4, must-understand, FORMAT.md §3.8: the sample's
    // sequence lines), then type 1 and type 2, neither must-understand (§3.5, §3.6)
    assert_eq!(kinds, [(4, 1), (1, 0), (2, 0)]);
    let payload = a.extensions().nth(2).unwrap().payload;
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

// ---------------------------------------------------------------------------------------
// `aceapex serve`

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};

/// The sequences of `fasta` as the test's own parse sees them: name and bases (line ends
/// dropped), uppercased; headers without lines left out (as samtools).
fn parse_fasta(fasta: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut seqs: Vec<(String, Vec<u8>, usize)> = Vec::new();
    for line in fasta.split(|&b| b == b'\n') {
        if let Some(h) = line.strip_prefix(b">") {
            let name = String::from_utf8_lossy(h)
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string();
            seqs.push((name, Vec::new(), 0));
        } else if let Some(s) = seqs.last_mut() {
            s.1.extend(line.iter().filter(|b| !b.is_ascii_whitespace()));
            s.2 += 1;
        }
    }
    seqs.into_iter()
        .filter(|s| s.2 > 0)
        .map(|(n, b, _)| (n, b.to_ascii_uppercase()))
        .collect()
}

/// A running `aceapex serve`, its address and its standard error so far.
struct Server {
    child: Child,
    addr: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_aceapex"))
            .arg("serve")
            .args(args)
            .args(["--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut addr = None;
        for line in lines.by_ref() {
            let line = line.unwrap();
            log.lock().unwrap().push(line.clone());
            if let Some(rest) = line.split("refget server on http://").nth(1) {
                addr = Some(rest.split('/').next().unwrap().to_string());
                break;
            }
        }
        let addr = addr.unwrap_or_else(|| panic!("no address: {:?}", log.lock().unwrap()));
        let log2 = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                log2.lock().unwrap().push(line);
            }
        });
        Server { child, addr, log }
    }

    /// `GET path` with `headers`: status, headers (names lowercase), body.
    fn get(&self, path: &str, headers: &[(&str, &str)]) -> (u16, Vec<(String, String)>, Vec<u8>) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        let mut req = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.addr
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("header end");
        let head = String::from_utf8(raw[..split].to_vec()).unwrap();
        let body = raw[split + 4..].to_vec();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        if let Some((_, n)) = headers.iter().find(|(k, _)| k == "content-length") {
            assert_eq!(body.len(), n.parse::<usize>().unwrap(), "{path}");
        }
        (status, headers, body)
    }

    fn status(&self, path: &str, headers: &[(&str, &str)]) -> u16 {
        self.get(path, headers).0
    }

    /// Sends SIGTERM and waits: the exit status and standard error.
    fn stop(&mut self) -> (Option<i32>, String) {
        // SAFETY: kill(2) on the child's pid, which has not been waited for yet.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        (status.code(), self.log.lock().unwrap().join("\n"))
    }
}

/// A test that fails midway still ends its server.
impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// `sample_fasta` and a sequence of 2.5 million bases (answers over the 1 MiB piece of the
/// server are streamed).
fn serve_fasta() -> Vec<u8> {
    let mut f = sample_fasta();
    f.extend_from_slice(b">big\n");
    let mut x = 99u64;
    for i in 0..2_500_000u32 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        f.push(b"ACGTNacgt"[(x >> 33) as usize % 9]);
        if i % 70 == 69 {
            f.push(b'\n');
        }
    }
    f.push(b'\n');
    f
}

#[test]
fn serve_answers_with_the_original_bases() {
    let fasta = serve_fasta();
    let dir = tempfile::tempdir().unwrap();
    let acx = dir.path().join("s.fa.acx");
    std::fs::write(
        &acx,
        aceapex::compress(&fasta, &Options::default()).unwrap(),
    )
    .unwrap();
    let mut server = Server::start(&[acx.to_str().unwrap(), "--circular", "s2"]);
    let seqs = parse_fasta(&fasta);
    let ids = python_digests(&fasta);
    assert_eq!(seqs.len(), ids.len());
    let refget = [("Accept", "text/vnd.ga4gh.refget.v1.0.0+plain")];
    for ((name, bases), (_, len, md5, trunc, sq)) in seqs.iter().zip(&ids) {
        if name == "star" {
            // a base that is not a letter: not served
            assert_eq!(server.status(&format!("/sequence/{md5}"), &refget), 404);
            continue;
        }
        assert_eq!(*len, bases.len() as u64);
        for id in [
            md5.clone(),
            md5.to_uppercase(),
            trunc.clone(),
            sq.clone(),
            format!("ga4gh:{sq}"),
        ] {
            let (status, h, body) = server.get(&format!("/sequence/{id}"), &refget);
            assert_eq!(status, 200, "{name} {id}");
            assert!(body == *bases, "{name} {id}: {} bytes", body.len());
            assert_eq!(
                header(&h, "content-type"),
                Some("text/vnd.ga4gh.refget.v1.0.0+plain")
            );
        }
        let (status, h, body) = server.get(&format!("/sequence/{md5}/metadata"), &[]);
        assert_eq!(status, 200);
        assert_eq!(
            header(&h, "content-type"),
            Some("application/vnd.ga4gh.refget.v1.0.0+json")
        );
        let body = String::from_utf8(body).unwrap();
        for want in [
            format!("\"length\":{len}"),
            format!("\"md5\":\"{md5}\""),
            format!("\"trunc512\":\"{trunc}\""),
            format!("\"alias\":\"{name}\""),
        ] {
            assert!(body.contains(&want), "{body} lacks {want}");
        }
    }

    // sub-sequences of the big one (streamed when over 1 MiB) and of the long one
    let at = |name: &str| seqs.iter().position(|s| s.0 == name).unwrap();
    let (big, big_md5) = (&seqs[at("big")].1, &ids[at("big")].2);
    let mut x = 7u64;
    for _ in 0..30 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        let a = (x >> 20) % big.len() as u64;
        let b = (a + (x >> 44) % 1_500_000).min(big.len() as u64);
        let (s, _, body) = server.get(&format!("/sequence/{big_md5}?start={a}&end={b}"), &refget);
        assert_eq!(s, 200);
        assert!(body[..] == big[a as usize..b as usize], "{a}-{b}");
        let (s, h, body) = server.get(
            &format!("/sequence/{big_md5}"),
            &[("Range", &format!("bytes={a}-{}", b.max(a + 1) - 1))],
        );
        assert_eq!(s, 206);
        assert!(
            body[..] == big[a as usize..b.max(a + 1) as usize],
            "range {a}-{b}"
        );
        assert_eq!(
            header(&h, "content-range"),
            Some(&format!("bytes {a}-{}/{}", b.max(a + 1) - 1, big.len())[..])
        );
    }
    let (s, _, body) = server.get(
        &format!("/sequence/{big_md5}"),
        &[("Range", "bytes=2499990-99999999")],
    );
    assert_eq!((s, &body[..]), (206, &big[2_499_990..]));

    // circular (--circular s2): start > end wraps round
    let (s2, s2_md5) = (&seqs[at("s2")].1, &ids[at("s2")].2);
    let (s, _, body) = server.get(&format!("/sequence/{s2_md5}?start=10&end=3"), &refget);
    assert_eq!((s, body), (200, [&s2[10..], &s2[..3]].concat()));

    // status codes of the refget specification
    let s1 = &ids[0].2;
    let n1 = seqs[0].1.len();
    for (path, headers, want) in [
        ("/sequence/Garbagechecksum".to_string(), vec![], 404),
        (
            format!("/sequence/{s1}"),
            vec![("Accept", "embl/some_json")],
            406,
        ),
        (
            format!("/sequence/{s1}/metadata"),
            vec![("Accept", "embl/some_json")],
            406,
        ),
        (format!("/sequence/{s1}?start=abc&end=20"), vec![], 400),
        (format!("/sequence/{s1}?start=-10&end=-29"), vec![], 400),
        (
            format!("/sequence/{s1}"),
            vec![("Range", "units=20-30")],
            400,
        ),
        (
            format!("/sequence/{s1}"),
            vec![("Range", "bytes==10-19")],
            400,
        ),
        (
            format!("/sequence/{s1}?start=1"),
            vec![("Range", "bytes=1-2")],
            400,
        ),
        (format!("/sequence/{s1}?start={n1}"), vec![], 416),
        (
            format!("/sequence/{s1}?start=0&end={}", n1 + 1),
            vec![],
            416,
        ),
        (format!("/sequence/{s1}?start=5&end=2"), vec![], 416),
        (format!("/sequence/{s1}"), vec![("Range", "bytes=5-2")], 416),
        (
            format!("/sequence/{s1}"),
            vec![("Range", &format!("bytes={n1}-{}", n1 + 3)[..])],
            416,
        ),
        (format!("/sequence/{s1}?start=3&end=3"), vec![], 200),
        ("/nothing".to_string(), vec![], 404),
    ] {
        assert_eq!(server.status(&path, &headers), want, "{path} {headers:?}");
    }
    let (s, _, info) = server.get("/sequence/service-info", &[]);
    let info = String::from_utf8(info).unwrap();
    assert_eq!(s, 200);
    assert!(
        info.contains("\"circular_supported\":true") && info.contains("\"trunc512\""),
        "{info}"
    );

    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("SIGTERM"), "{log}");
    // common log format lines
    assert!(
        log.lines().any(|l| l.starts_with("127.0.0.1 - - [")
            && l.ends_with(&format!(
                "\"GET /sequence/service-info HTTP/1.1\" 200 {}",
                info.len()
            ))),
        "{log}"
    );
    assert!(log.contains("not serving star"), "{log}");
}

#[test]
fn serve_plain_fasta_and_errors() {
    let fasta = sample_fasta();
    let dir = tempfile::tempdir().unwrap();
    let fa = dir.path().join("s.fa");
    std::fs::write(&fa, &fasta).unwrap();
    let mut server = Server::start(&[fa.to_str().unwrap()]);
    for ((name, bases), (_, _, md5, _, _)) in parse_fasta(&fasta).iter().zip(python_digests(&fasta))
    {
        if name != "star" {
            let (s, _, body) = server.get(&format!("/sequence/{md5}"), &[]);
            assert_eq!((s, &body), (200, bases), "{name}");
        }
    }
    server.stop();

    // an archive without the checksums record: the server computes them when it starts
    let index = aceapex::fasta::FastaIndex::build(&fasta).unwrap();
    let bare = aceapex::encode::compress(&fasta, &Options::default(), &|_| {}).unwrap();
    let old = dir.path().join("old.acx");
    std::fs::write(&old, aceapex::with_fasta_index(&bare, &index).unwrap()).unwrap();
    let mut server = Server::start(&[old.to_str().unwrap()]);
    for ((name, bases), (_, _, _, _, sq)) in parse_fasta(&fasta).iter().zip(python_digests(&fasta))
    {
        if name != "star" {
            let (s, _, body) = server.get(&format!("/sequence/{sq}?start=1"), &[]);
            assert_eq!((s, &body[..]), (200, &bases[1..]), "{name}");
        }
    }
    let (_, log) = server.stop();
    assert!(log.contains("carries no sequence checksums"), "{log}");

    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_aceapex"))
            .arg("serve")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[
        fa.to_str().unwrap(),
        "--device",
        "gpu",
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--device gpu: "));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not an archive"));
    let txt = dir.path().join("t.txt");
    std::fs::write(&txt, b"hello").unwrap();
    let out = run(&[txt.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither an aceapex archive nor a FASTA"));
    let out = run(&[
        fa.to_str().unwrap(),
        "--circular",
        "nope",
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(out.status.code(), Some(1));
}
