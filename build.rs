//! Builds the device crate (`device/`) into PTX for sm_90 and embeds it in the host crate.
//!
//! Steps (CONTRIBUTING.md, "Building"):
//! 1. a nested `cargo rustc` builds `aceapex-device` as a `cdylib` for `nvptx64-nvidia-cuda`
//!    with `-Zbuild-std=core`, `-C target-cpu=sm_90`, fat LTO and `panic=abort`, in its own
//!    target directory (`target/ptx`);
//! 2. rustc hands the LTO'd bitcode to a "linker" of the nvptx target's bitcode-linker flavour;
//!    the upstream `llvm-bitcode-linker` component cannot be downloaded, so this very build
//!    script is that linker (re-invoked with `ACEAPEX_PTX_LINKER=1`): it runs llvm-tools'
//!    `llvm-link` and `llc` from `rustc --print sysroot`;
//! 3. the PTX is checked (`.target sm_90`, an `.entry` for every name of
//!    `device/src/kernel_names.rs`), the bounded entry points get their occupancy directives
//!    (`.maxntid`, `.minnctapersm`: Rust has no attribute for them; the values come from
//!    `device/src/kernel_names.rs`, compiled into this script),
//!    and the result is copied to `$OUT_DIR/aceapex.ptx`, which `host/gpu/mod.rs` embeds
//!    with `include_str!`.
//!
//! Without the `gpu` feature nothing is built (the library then has no GPU code, and builds
//! on a stable toolchain). `ACEAPEX_SKIP_PTX=1` embeds an empty module instead (the GPU path
//! then reports that the binary was built without kernels); everything else still builds
//! and runs on the CPU.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

/// The dense kernel's layout constants (THREADS, MIN_CTAS_PER_SM), the device crate's own
/// definitions: the file is plain `const` items, compiled here as a module.
#[allow(dead_code)]
#[path = "device/src/dense_layout.rs"]
mod dense_layout;

/// The rANS kernel's launch bounds (KERNEL_MAX_WARPS, KERNEL_CTAS_PER_SM), likewise.
#[allow(dead_code)]
#[path = "device/src/rans_launch.rs"]
mod rans_launch;

/// The one list of entry points and their launch bounds (KERNEL_NAMES, LAUNCH_BOUNDS), likewise.
#[allow(dead_code, unused_macros)]
#[path = "device/src/kernel_names.rs"]
mod kernel_names;

const TARGET: &str = "nvptx64-nvidia-cuda";
const GPU_ARCH: &str = "sm_90";

fn main() {
    if env::var_os("ACEAPEX_PTX_LINKER").is_some() {
        link_ptx();
        return;
    }
    println!("cargo:rerun-if-changed=device/src");
    println!("cargo:rerun-if-changed=device/Cargo.toml");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=ACEAPEX_SKIP_PTX");
    println!("cargo:rerun-if-env-changed=ACEAPEX_DEVICE_FEATURES");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let ptx_out = out_dir.join("aceapex.ptx");
    // cargo sets CARGO_FEATURE_GPU when the `gpu` feature is on
    if env::var_os("ACEAPEX_SKIP_PTX").is_some() || env::var_os("CARGO_FEATURE_GPU").is_none() {
        fs::write(&ptx_out, "").expect("write empty PTX");
        return;
    }
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    // OUT_DIR = <target>/<profile>/build/<pkg>[-<hash>]/.../out: the PTX build gets
    // <target>/ptx, shared by all profiles, so `cargo test` and `cargo build --release` reuse
    // one build of core for nvptx.
    let target_root = out_dir
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))
        .and_then(|b| b.parent()?.parent())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.clone());
    let ptx_target_dir = target_root.join("ptx");
    // cargo uplifts the linked cdylib here, also when the nested build was already fresh
    let linked = ptx_target_dir
        .join(TARGET)
        .join("release")
        .join("aceapex_device.ptx");

    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let me = env::current_exe().expect("path of the build script");
    let mut cmd = Command::new(cargo);
    cmd.current_dir(manifest_dir.join("device"))
        .args([
            "rustc",
            "--release",
            "--lib",
            "--crate-type",
            "cdylib",
            "--target",
            TARGET,
        ])
        .args(["-Zbuild-std=core", "--target-dir"])
        .arg(&ptx_target_dir);
    // measurement builds: device crate features, e.g. `trace` (device/src/trace.rs)
    if let Ok(features) = env::var("ACEAPEX_DEVICE_FEATURES") {
        cmd.args(["--features", &features]);
    }
    // The outer build's flags and wrappers are for the host; none may leak into the device build.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
    ] {
        cmd.env_remove(var);
    }
    let rustflags = [
        format!("-Ctarget-cpu={GPU_ARCH}"),
        format!("-Clinker={}", me.display()),
    ]
    .join("\x1f");
    cmd.env("CARGO_ENCODED_RUSTFLAGS", rustflags)
        .env("CARGO_PROFILE_RELEASE_LTO", "fat")
        .env("CARGO_PROFILE_RELEASE_PANIC", "abort")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS", "false")
        .env("CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS", "false")
        .env("ACEAPEX_PTX_LINKER", "1");
    let status = cmd
        .status()
        .unwrap_or_else(|e| fail(&format!("could not run cargo for the device crate: {e}")));
    if !status.success() {
        fail(&format!(
            "building the device crate for {TARGET} failed (see above). It needs the nightly named in \
             rust-toolchain.toml with the components rust-src and llvm-tools (`rustup toolchain install` in the checkout \
             installs it):\n    rustup toolchain install nightly-2026-10-15 --component rust-src,llvm-tools\n\
             or build without kernels: ACEAPEX_SKIP_PTX=1, or the library without the `gpu` feature"
        ));
    }
    let ptx = fs::read_to_string(&linked)
        .unwrap_or_else(|e| fail(&format!("no PTX at {}: {e}", linked.display())));
    if !ptx.contains(&format!(".target {GPU_ARCH}")) || !ptx.contains(".entry") {
        fail(&format!(
            "{} lacks `.target {GPU_ARCH}` or kernel entry points",
            linked.display()
        ));
    }
    // every entry point of the one list (device/src/kernel_names.rs) in the PTX
    for name in kernel_names::KERNEL_NAMES {
        if !ptx.contains(&format!(".entry {name}(")) {
            fail(&format!(
                "{} lacks the entry point `{name}` (device/src/kernel_names.rs)",
                linked.display()
            ));
        }
    }
    let mut ptx = ptx;
    for (entry, threads, ctas) in kernel_names::LAUNCH_BOUNDS {
        ptx = with_entry_directives(
            &ptx,
            entry,
            &format!(".maxntid {threads}, 1, 1\n.minnctapersm {ctas}\n"),
        );
    }
    fs::write(&ptx_out, ptx).expect("write PTX to OUT_DIR");
}

/// `ptx` with `directives` placed between the parameter list and the body of `.entry name`
/// (PTX ISA "Performance-tuning directives").
fn with_entry_directives(ptx: &str, name: &str, directives: &str) -> String {
    let head = format!(".entry {name}(");
    let at = ptx
        .find(&head)
        .unwrap_or_else(|| fail(&format!("the PTX has no `{head}`")));
    // the body's `{` opens the first line that starts with one after the parameter list
    // (whose `)` line may carry a comment)
    let body = ptx[at..]
        .find("\n{")
        .map(|i| at + i + 1)
        .unwrap_or_else(|| fail(&format!("`{head}` has no body")));
    format!("{}{}{}", &ptx[..body], directives, &ptx[body..])
}

fn fail(msg: &str) -> ! {
    eprintln!("error: aceapex build.rs: {msg}");
    exit(1)
}

/// The nvptx "linker": `llvm-link` the LTO'd bitcode objects, then `llc` them to PTX.
///
/// rustc passes bitcode-linker style arguments: object files, `--export-symbol NAME`, `-L DIR`,
/// `--target T`, `--target-cpu CPU`, `-O<n>`, `-o OUT`. Rust rlibs (only compiler_builtins
/// reaches here after fat LTO) are skipped; a symbol they would have provided shows up as an
/// undefined symbol, which fails the link with its name.
fn link_ptx() {
    let args: Vec<String> = env::args().skip(1).collect();
    let mut objects = Vec::new();
    let mut out = None;
    let mut cpu = GPU_ARCH.to_string();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        match a.as_str() {
            "-o" => {
                out = args.get(i + 1).cloned();
                i += 1;
            }
            "--target-cpu" => {
                if let Some(c) = args.get(i + 1) {
                    cpu = c.clone();
                }
                i += 1;
            }
            "--export-symbol" | "-L" | "--target" | "--linker-plugin-lto" => i += 1,
            s if s.ends_with(".o") => objects.push(s.to_string()),
            _ => {}
        }
        i += 1;
    }
    let out = out.unwrap_or_else(|| fail("linker called without -o"));
    if objects.is_empty() {
        fail("linker called without bitcode objects");
    }
    let tools = llvm_tools_dir();
    let linked_bc = format!("{out}.linked.bc");
    run(
        Command::new(tools.join("llvm-link"))
            .args(&objects)
            .arg("-o")
            .arg(&linked_bc),
        "llvm-link",
    );
    let undefined = Command::new(tools.join("llvm-nm"))
        .args(["--undefined-only", "--format=just-symbols"])
        .arg(&linked_bc)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    // `anon.*` is the extern dynamic shared-memory array of gpu_launch_sized_workgroup_mem,
    // which PTX declares `.extern .shared` and the driver sizes at launch.
    let missing: Vec<&str> = undefined
        .lines()
        .filter(|s| !s.is_empty() && !s.starts_with("llvm.") && !s.starts_with("anon."))
        .collect();
    if !missing.is_empty() {
        fail(&format!(
            "device code calls functions nothing defines: {missing:?}"
        ));
    }
    run(
        Command::new(tools.join("llc"))
            .args([
                "-O3",
                "-march=nvptx64",
                &format!("-mcpu={cpu}"),
                "-mattr=+ptx80",
            ])
            .arg(&linked_bc)
            .arg("-o")
            .arg(&out),
        "llc",
    );
}

fn llvm_tools_dir() -> PathBuf {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|e| fail(&format!("rustc --print sysroot: {e}")));
    let host = env::var("HOST").unwrap_or_else(|_| "x86_64-unknown-linux-gnu".into());
    let dir = Path::new(&sysroot)
        .join("lib/rustlib")
        .join(host)
        .join("bin");
    if !dir.join("llc").exists() || !dir.join("llvm-link").exists() {
        fail(&format!(
            "llc / llvm-link not found in {}: install the llvm-tools component (rustup component add llvm-tools)",
            dir.display()
        ));
    }
    dir
}

fn run(cmd: &mut Command, what: &str) {
    match cmd.status() {
        Ok(s) if s.success() => {}
        Ok(s) => fail(&format!("{what} failed with {s}")),
        Err(e) => fail(&format!("could not run {what}: {e}")),
    }
}
