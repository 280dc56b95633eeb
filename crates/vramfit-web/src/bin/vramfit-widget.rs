//! Entry point of the embeddable widget (`embed.html`): mounts it and nothing else.

fn main() {
    vramfit_web::mount_widget();
}
