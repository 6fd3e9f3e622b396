//! The pure-CPU control for `bench/`: a fixed amount of arithmetic split
//! across a rayon pool, on one thread and on all of them. Its speed-up is
//! what the machine can give to any CPU-bound work, so `analyze`'s own
//! speed-up is read against it (on shared 2-vCPU machines a second thread
//! often brings far less than 2×).
//!
//! usage: cargo run --release --example cpu_control -- [THREADS]
//! Prints `threads=<n> seconds=<s>` for 1 thread and for THREADS (default:
//! all cores), then `speedup=<x>`.

use std::time::Instant;

use rayon::prelude::*;

/// Work items; each is a few million dependent multiply-xorshift steps.
const ITEMS: u64 = 256;
const STEPS: u64 = 2_000_000;

fn work(seed: u64) -> u64 {
    let mut x = seed.wrapping_mul(2).wrapping_add(1);
    for _ in 0..STEPS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
    }
    x
}

fn timed(threads: usize) -> Result<f64, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let checksum: u64 = pool.install(|| {
        (0..ITEMS)
            .into_par_iter()
            .map(work)
            .reduce(|| 0, |a, b| a ^ b)
    });
    let seconds = start.elapsed().as_secs_f64();
    // Printed so the work cannot be optimised away.
    println!("threads={threads} seconds={seconds:.3} checksum={checksum:016x}");
    Ok(seconds)
}

fn main() -> Result<(), String> {
    let all = match std::env::args().nth(1) {
        Some(n) => n.parse::<usize>().map_err(|e| format!("THREADS: {e}"))?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let one = timed(1)?;
    let many = timed(all)?;
    println!("speedup={:.2}", one / many);
    Ok(())
}
