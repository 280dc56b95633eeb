//! Entry point of the Benchmark page (`bench.html`): mounts it and nothing else.

fn main() {
    vramfit_web::mount_bench();
}
