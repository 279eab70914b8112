// postflop-solver on cfrkit's benchmark spots (benchmarks/range_solver.py: same boards, pots, stacks, bet
// sizes, thresholds 0, full ranges), timed as cfrkit times them: CPU seconds of the process (getrusage, all
// threads) and wall seconds over the solve steps only, the exploitability (% of the starting pot) checked
// every 5 iterations and not timed.  Threads: RAYON_NUM_THREADS.  Build: build.sh beside this file.
// usage: cfrkit_bench river|turn|flop TARGET_PERCENT MAX_ITERATIONS [compress]
use postflop_solver::*;
use std::time::Instant;

fn cpu() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn peak_rss_kib() -> i64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    u.ru_maxrss as i64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spot = args[1].as_str();
    let target: f32 = args[2].parse().unwrap();
    let max_it: u32 = args[3].parse().unwrap();
    let compress = args.len() > 4 && args[4] == "compress";
    let (flop, turn, river, state, pot, stack, s_flop, s_turn, s_river) = match spot {
        "river" => ("AsJd8h", "5c", "2d", BoardState::River, 1000, 2000, "50%, 100%, a", "50%, 100%, a", "50%, 100%, a"),
        "turn" => ("8dAs8s", "Kh", "", BoardState::Turn, 4000, 18000, "50%, 100%, a", "50%, 100%, a", "100%, a"),
        _ => ("QsJh2h", "", "", BoardState::Flop, 200, 900, "50%, a", "50%, a", "50%, a"),
    };
    let card = |s: &str| if s.is_empty() { NOT_DEALT } else { card_from_str(s).unwrap() };
    let card_config = CardConfig { range: [Range::ones(), Range::ones()], flop: flop_from_str(flop).unwrap(),
                                   turn: card(turn), river: card(river) };
    let b = |s: &str| BetSizeOptions::try_from((s, s)).unwrap();
    let tree_config = TreeConfig { initial_state: state, starting_pot: pot, effective_stack: stack,
        flop_bet_sizes: [b(s_flop), b(s_flop)], turn_bet_sizes: [b(s_turn), b(s_turn)],
        river_bet_sizes: [b(s_river), b(s_river)], ..Default::default() };
    let t0 = Instant::now();
    let action_tree = ActionTree::new(tree_config).unwrap();
    let mut game = PostFlopGame::with_config(card_config, action_tree).unwrap();
    let (m, mc) = game.memory_usage();
    game.allocate_memory(compress);
    println!("build {:.2} s wall, memory_usage {:.1} MiB (compressed {:.1} MiB)", t0.elapsed().as_secs_f64(),
             m as f64 / 1048576.0, mc as f64 / 1048576.0);
    let (mut c, mut w) = (0.0, 0.0);
    let mut i = 0;
    while i < max_it {
        let (c0, w0) = (cpu(), Instant::now());
        solve_step(&game, i);
        c += cpu() - c0;
        w += w0.elapsed().as_secs_f64();
        i += 1;
        if i % 5 == 0 || i == max_it {
            let e = compute_exploitability(&game) / pot as f32 * 100.0;
            println!("{} iterations, {:.4}% of the pot, {:.3} CPU s, {:.3} s wall", i, e, c, w);
            if e <= target { break; }
        }
    }
    println!("peak RSS {} KiB", peak_rss_kib());
}
