//! Entry point of the web app: mounts the root component and nothing else.

fn main() {
    vramfit_web::mount();
}
