//! Encryption benchmark: `ONNXAE01` and `ONNXCRY1` throughput on a generated model,
//! next to the raw AES-256-CBC and HMAC-SHA256 throughput of the same crates measured
//! in the same run, the KDF cost on its own, and the peak memory of file-to-file
//! streaming. Prints a markdown table.
//!
//! ```sh
//! cargo run --release -p onnx-light-bench --bin crypto-bench            # ~1 GiB model
//! cargo run --release -p onnx-light-bench --bin crypto-bench -- 256     # size in MiB
//! ```
//!
//! Throughput is plaintext bytes per second (GB = 10^9 bytes), best of five runs (1- and
//! 2-thread runs alternate), through the public API (so it includes allocating and
//! faulting in the output). "cores busy" is the process's CPU time over wall time in that
//! run: a 2-thread run well below 2 with a low speed-up means the process did not get
//! two cores (other processes competing), not that the code does not scale. The load
//! average before and after is printed too.
//! In-memory runs use 1 000 PBKDF2 iterations (about 1 ms, reported separately).
//! Streaming runs in a child process, so that its peak RSS (`VmHWM`) is its own.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use aes::cipher::array::Array;
use aes::cipher::{BlockModeDecrypt, BlockModeEncrypt, KeyIvInit};
use hmac::{Hmac, KeyInit, Mac};
use rayon::prelude::*;
use sha2::Sha256;

use onnx_light::crypto::{self, DecryptOptions, EncryptOptions, EncryptionFormat, Passphrase};
use onnx_light::io::{self, ParseOptions, SerializeOptions};
use onnx_light::onnx::*;

const RUNS: usize = 5;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--stream-child") {
        stream_child(Path::new(&args[2]), &args[3]);
        return;
    }
    let usage = "usage: crypto-bench [SIZE_MIB]   (the model's size, default 1024)";
    if matches!(args.get(1).map(String::as_str), Some("-h" | "--help")) {
        println!("{usage}");
        return;
    }
    let mib: usize = match args.get(1).map(|s| s.parse::<usize>()) {
        None => 1024,
        Some(Ok(n)) if n > 0 && args.len() == 2 => n,
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let model = generate_model(mib << 20);
    let plaintext = io::save_to_vec(&model, &SerializeOptions::default()).unwrap();
    let len = plaintext.len();
    println!(
        "model: {} initializers, {:.2} GiB encoded; {} cores\n",
        model.tensors().len(),
        len as f64 / (1u64 << 30) as f64,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    let mut table = Table::default();
    let load_before = load_average();
    raw_primitives(&plaintext, &mut table);
    kdf_cost(&mut table);

    let passphrase = Passphrase::new("benchmark passphrase");
    let fast = |threads| {
        EncryptOptions::default()
            .iterations(crypto::MIN_ITERATIONS)
            .num_threads(threads)
    };
    let mut sealed = Vec::new();
    let t = compare(|threads| {
        sealed = crypto::encrypt_bytes(&plaintext, &passphrase, &fast(threads)).unwrap();
    });
    table.pair("ONNXAE01 encrypt (encrypt_bytes)", len, t);
    let t = compare(|threads| {
        let options = DecryptOptions::default().num_threads(threads);
        let d = crypto::decrypt_bytes(&sealed, &passphrase, &options).unwrap();
        assert_eq!(d.bytes.len(), len);
    });
    table.pair("ONNXAE01 decrypt (decrypt_bytes, into a new Vec)", len, t);
    let t = compare(|threads| {
        let options = DecryptOptions::default().num_threads(threads);
        let m = crypto::load_encrypted_from_bytes(
            &sealed,
            &passphrase,
            &options,
            &ParseOptions::default(),
        )
        .unwrap();
        assert_eq!(m.model.tensors().len(), model.tensors().len());
    });
    table.pair(
        "ONNXAE01 decrypt + decode (load_encrypted_from_bytes)",
        len,
        t,
    );
    drop(sealed);

    let cry1 = EncryptOptions::default().format(EncryptionFormat::OnnxCry1);
    let kdf = time_kdf(crypto::ONNXCRY1_ITERATIONS);
    let mut sealed = Vec::new();
    let t = best(|| sealed = crypto::encrypt_bytes(&plaintext, &passphrase, &cry1).unwrap());
    table.row(
        "ONNXCRY1 encrypt (one CBC chain), KDF excluded",
        1,
        len,
        t.minus(kdf),
    );
    let t = compare(|threads| {
        let options = DecryptOptions::default()
            .num_threads(threads)
            .allow_unauthenticated(true);
        crypto::decrypt_bytes(&sealed, &passphrase, &options).unwrap();
    });
    table.pair(
        "ONNXCRY1 decrypt, KDF excluded",
        len,
        t.map(|t| t.minus(kdf)),
    );
    drop(sealed);

    // File to file, on disk (includes flushing the output to the device) and, where
    // there is one, on tmpfs (the pipeline alone).
    let mut places = vec![(
        "disk",
        scratch_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../target")),
    )];
    if Path::new("/dev/shm").is_dir() {
        places.push(("tmpfs", scratch_dir(PathBuf::from("/dev/shm"))));
    }
    for (place, dir) in &places {
        std::fs::write(dir.join("plain.onnx"), &plaintext).unwrap();
        let zero = Sample {
            wall: Duration::ZERO,
            cpu: Duration::ZERO,
        };
        let mut times = [[zero; 2]; 2];
        let mut peak_rss = [0f64; 2];
        // Best of three, alternating thread counts, as for the in-memory rows.
        for _ in 0..3 {
            for threads in [1usize, 2] {
                let out = Command::new(std::env::current_exe().unwrap())
                    .arg("--stream-child")
                    .arg(dir)
                    .arg(threads.to_string())
                    .output()
                    .expect("run the streaming child");
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let text = String::from_utf8(out.stdout).unwrap();
                let v: Vec<f64> = text
                    .split_whitespace()
                    .map(|x| x.parse().unwrap())
                    .collect();
                for (step, at) in [(0, 0), (1, 2)] {
                    let slot = &mut times[step][threads - 1];
                    if slot.wall.is_zero() || v[at] < slot.wall.as_secs_f64() {
                        *slot = Sample {
                            wall: Duration::from_secs_f64(v[at]),
                            cpu: Duration::from_secs_f64(v[at + 1]),
                        };
                    }
                }
                peak_rss[threads - 1] = peak_rss[threads - 1].max(v[4]);
            }
        }
        for threads in [1, 2] {
            table.note(format!(
                "peak RSS of the {threads}-thread file-to-file child ({place}; encrypt then decrypt): {:.1} MiB for a {:.2} GiB file",
                peak_rss[threads - 1] / 1024.0,
                len as f64 / (1u64 << 30) as f64
            ));
        }
        table.pair(
            &format!("ONNXAE01 encrypt_file, file to file ({place})"),
            len,
            times[0],
        );
        table.pair(
            &format!("ONNXAE01 decrypt_file, file to file ({place})"),
            len,
            times[1],
        );
        let _ = std::fs::remove_dir_all(dir);
        let _ = std::fs::remove_dir(dir.parent().unwrap());
    }
    drop(plaintext);
    table.note(format!(
        "load average (1 min) before / after: {load_before} / {}",
        load_average()
    ));
    table.print();
}

/// Encrypts and decrypts `dir/plain.onnx` file to file; prints the wall and CPU time
/// of each step in seconds and the peak RSS in KiB.
fn stream_child(dir: &Path, threads: &str) {
    let threads: usize = threads.parse().unwrap();
    let passphrase = Passphrase::new("benchmark passphrase");
    let options = EncryptOptions::default()
        .iterations(crypto::MIN_ITERATIONS)
        .num_threads(threads);
    let enc = Sample::of(|| {
        let (src, dst) = (dir.join("plain.onnx"), dir.join("enc"));
        crypto::encrypt_file(src, dst, &passphrase, &options).unwrap();
    });
    let options = DecryptOptions::default().num_threads(threads);
    let dec = Sample::of(|| {
        crypto::decrypt_file(dir.join("enc"), dir.join("dec"), &passphrase, &options).unwrap();
    });
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    println!(
        "{} {} {} {} {hwm}",
        enc.wall.as_secs_f64(),
        enc.cpu.as_secs_f64(),
        dec.wall.as_secs_f64(),
        dec.cpu.as_secs_f64()
    );
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn generate_model(bytes: usize) -> Model {
    let mut graph = GraphProto::named("crypto-bench");
    let per = 64 << 20;
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for i in 0..bytes.div_ceil(per) {
        let n = per.min(bytes - i * per);
        let mut data = vec![0u8; n];
        data.par_chunks_mut(8).enumerate().for_each(|(k, c)| {
            let v = (seed ^ k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            c.copy_from_slice(&v.to_le_bytes()[..c.len()]);
        });
        seed = seed.rotate_left(7) ^ i as u64;
        graph.initializer.push(TensorProto::from_raw(
            format!("w{i}"),
            DataType::Uint8,
            [n as i64],
            data,
        ));
    }
    ModelProto::new(graph, vec![OperatorSetIdProto::new("", 21)])
}

/// Raw throughput of the primitives: the input split in one part per thread.
fn raw_primitives(plaintext: &[u8], table: &mut Table) {
    let mut buf = plaintext.to_vec();
    let len = buf.len();
    let key = [7u8; 32];
    let iv = [9u8; 16];
    let pools: Vec<rayon::ThreadPool> = (1..=2)
        .map(|n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        })
        .collect();
    let part = |threads: usize| len.div_ceil(threads).div_ceil(16) * 16;
    let t = compare(|threads| {
        pools[threads - 1].install(|| {
            buf.par_chunks_mut(part(threads)).for_each(|c| {
                let whole = c.len() / 16 * 16;
                let mut e = cbc::Encryptor::<aes::Aes256Enc>::new(&key.into(), &iv.into());
                e.encrypt_blocks(Array::slice_as_chunks_mut(&mut c[..whole]).0);
            })
        })
    });
    table.pair("raw AES-256-CBC encrypt (aes+cbc crates)", len, t);
    let t = compare(|threads| {
        pools[threads - 1].install(|| {
            buf.par_chunks_mut(part(threads)).for_each(|c| {
                let whole = c.len() / 16 * 16;
                let mut d = cbc::Decryptor::<aes::Aes256Dec>::new(&key.into(), &iv.into());
                d.decrypt_blocks(Array::slice_as_chunks_mut(&mut c[..whole]).0);
            })
        })
    });
    table.pair("raw AES-256-CBC decrypt (aes+cbc crates)", len, t);
    let t = compare(|threads| {
        pools[threads - 1].install(|| {
            buf.par_chunks(part(threads)).for_each(|c| {
                let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&key).unwrap();
                m.update(c);
                std::hint::black_box(m.finalize());
            })
        })
    });
    table.pair("raw HMAC-SHA256 (hmac+sha2 crates)", len, t);
}

fn time_kdf(iterations: u32) -> Duration {
    best(|| {
        let mut out = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<Sha256>(b"benchmark passphrase", &[1; 32], iterations, &mut out);
        std::hint::black_box(out);
    })
    .wall
}

fn kdf_cost(table: &mut Table) {
    for (what, n) in [
        (
            "PBKDF2-HMAC-SHA256, ONNXAE01 default",
            crypto::DEFAULT_ITERATIONS,
        ),
        ("PBKDF2-HMAC-SHA256, ONNXCRY1", crypto::ONNXCRY1_ITERATIONS),
        ("PBKDF2-HMAC-SHA256, minimum", crypto::MIN_ITERATIONS),
    ] {
        table.note(format!(
            "KDF: {what} ({n} iterations): {:.1} ms (once per file, before any chunk)",
            time_kdf(n).as_secs_f64() * 1e3
        ));
    }
}

/// Wall-clock and CPU time (all threads of the process) of one run.
#[derive(Clone, Copy)]
struct Sample {
    wall: Duration,
    cpu: Duration,
}

impl Sample {
    fn of(f: impl FnOnce()) -> Sample {
        let (wall, cpu) = (Instant::now(), cpu_time());
        f();
        Sample {
            wall: wall.elapsed(),
            cpu: cpu_time().saturating_sub(cpu),
        }
    }
    fn minus(self, d: Duration) -> Sample {
        Sample {
            wall: self.wall.saturating_sub(d),
            cpu: self.cpu.saturating_sub(d),
        }
    }
}

/// CPU time of this process so far (user + system, all threads), from
/// `/proc/self/stat` in clock ticks of 10 ms (Linux's usual `USER_HZ`).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<u64> = after_name
        .split_whitespace()
        .skip(11) // state .. cmajflt; then utime, stime
        .take(2)
        .map(|v| v.parse().unwrap_or(0))
        .collect();
    Duration::from_millis(10 * fields.iter().sum::<u64>())
}

/// Runs `f(1)` and `f(2)` alternately, `RUNS` times each, and keeps the fastest run of
/// each: alternating gives both thread counts the same share of a noisy machine.
fn compare(mut f: impl FnMut(usize)) -> [Sample; 2] {
    let mut best: [Option<Sample>; 2] = [None, None];
    for _ in 0..RUNS {
        for threads in [1, 2] {
            let run = Sample::of(|| f(threads));
            let slot = &mut best[threads - 1];
            if slot.is_none_or(|b| run.wall < b.wall) {
                *slot = Some(run);
            }
        }
    }
    best.map(Option::unwrap)
}

fn best(mut f: impl FnMut()) -> Sample {
    (0..RUNS)
        .map(|_| Sample::of(&mut f))
        .min_by_key(|s| s.wall)
        .unwrap()
}

fn scratch_dir(parent: PathBuf) -> PathBuf {
    let dir = parent
        .join("crypto-bench")
        .join(std::process::id().to_string());
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[derive(Default)]
struct Table {
    rows: Vec<(String, usize, usize, Sample)>,
    notes: Vec<String>,
}

impl Table {
    fn row(&mut self, what: &str, threads: usize, bytes: usize, sample: Sample) {
        self.rows.push((what.to_string(), threads, bytes, sample));
    }
    fn pair(&mut self, what: &str, bytes: usize, samples: [Sample; 2]) {
        self.row(what, 1, bytes, samples[0]);
        self.row(what, 2, bytes, samples[1]);
    }
    fn note(&mut self, text: String) {
        self.notes.push(text);
    }
    fn print(&self) {
        println!("| operation | threads | time | GB/s | vs 1 thread | cores busy |");
        println!("|---|---:|---:|---:|---:|---:|");
        let gbps = |bytes: usize, s: &Sample| bytes as f64 / s.wall.as_secs_f64() / 1e9;
        for (what, threads, bytes, sample) in &self.rows {
            let one = self
                .rows
                .iter()
                .find(|(w, t, _, _)| w == what && *t == 1)
                .map(|(_, _, b, s)| gbps(*b, s));
            let ratio = match one {
                Some(one) if *threads > 1 => format!("{:.2}x", gbps(*bytes, sample) / one),
                _ => String::new(),
            };
            println!(
                "| {what} | {threads} | {:.3} s | {:.2} | {ratio} | {:.2} |",
                sample.wall.as_secs_f64(),
                gbps(*bytes, sample),
                sample.cpu.as_secs_f64() / sample.wall.as_secs_f64(),
            );
        }
        println!();
        for n in &self.notes {
            println!("* {n}");
        }
    }
}
