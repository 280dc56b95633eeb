//! Prints a quick estimate, for development.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let id = args.get(1).map(String::as_str).unwrap_or("gpt2");
    let batch: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(8);
    let p = vramfit_core::model_preset(id).unwrap();
    for prec in ["fp32", "amp-bf16"] {
        for ck in ["none", "full"] {
            let cfg = vramfit_core::TrainConfig {
                batch,
                seq: 1024,
                precision: prec.parse().unwrap(),
                checkpointing: ck.parse().unwrap(),
                ..Default::default()
            };
            let e = vramfit_core::estimate(&p.spec, &cfg, &Default::default(), None).unwrap();
            println!(
                "{id} b{batch} {prec} ckpt={ck}: peak {} ({:?} step {} at {}), reserved {}, {:?}",
                e.peak_allocated_bytes, e.peak_phase, e.peak_step, e.peak_op, e.peak_reserved_bytes, e.at_peak
            );
        }
    }
}
