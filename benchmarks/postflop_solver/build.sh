#!/usr/bin/env bash
# Build postflop-solver (github b-inary/postflop-solver, commit 9d1509f) with cfrkit's benchmark driver
# (cfrkit_bench.rs beside this script), offline, from Debian's crate packages:
#
#   apt-get install librust-regex-dev librust-once-cell-dev librust-rayon-dev librust-libc-dev
#   git clone https://github.com/b-inary/postflop-solver /tmp/postflop-solver && git -C /tmp/postflop-solver checkout 9d1509f
#   bash benchmarks/postflop_solver/build.sh /tmp/postflop-solver
#   RAYON_NUM_THREADS=1 /tmp/postflop-solver/target/release/examples/cfrkit_bench turn 0.3 400
#
# It edits the checkout (not cfrkit): Debian bookworm's crates are older than the Cargo.toml asks for
# (once_cell 1.17, regex 1.7, rayon 1.6: they build it), the optional bincode / zstd (file I/O) are dropped,
# libc is added (the driver reads CPU time with getrusage), and cargo reads crates from
# /usr/share/cargo/registry instead of the network.  rustc 1.95 denies a lint the 2023 source trips
# (dangerous_implicit_autorefs), allowed here.
set -euo pipefail
src=${1:?usage: build.sh POSTFLOP_SOLVER_CHECKOUT}
here=$(cd "$(dirname "$0")" && pwd)
cd "$src"
sed -i -e 's/^once_cell = .*/once_cell = "1.17.0"/' -e 's/^regex = .*/regex = "1.7.1"/' \
       -e 's/^rayon = { version = "[^"]*"/rayon = { version = "1.6.1"/' -e '/^bincode = /d' -e '/^zstd = /d' \
       -e 's/^default = .*/default = ["rayon"]/' -e 's/^rayon = \["dep:rayon".*/rayon = ["dep:rayon"]/' Cargo.toml
grep -q '^libc = ' Cargo.toml || sed -i 's/^\[features\]/libc = "0.2"\n\n[features]/' Cargo.toml
mkdir -p .cargo
cat > .cargo/config.toml <<'CFG'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
CFG
cp "$here/cfrkit_bench.rs" examples/cfrkit_bench.rs
RUSTFLAGS="${RUSTFLAGS:-} -A dangerous_implicit_autorefs" cargo build --release --no-default-features --features rayon \
    --example cfrkit_bench
echo "built: $src/target/release/examples/cfrkit_bench"
