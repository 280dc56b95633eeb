//! Renders the calculator's default page to HTML at build time and writes
//! it into `index.html` in place of the loading placeholder, so the first
//! verdict paints with the HTML instead of after the WebAssembly starts
//! (the app replaces it when it mounts). Run by scripts/build-web.sh:
//! `vramfit-prerender DIST/index.html`.

use std::process::ExitCode;

/// Where the render goes in `index.html`: between these two comments.
const START: &str = "<!-- prerender -->";
const END: &str = "<!-- /prerender -->";

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: vramfit-prerender DIST/index.html");
        return ExitCode::from(2);
    };
    match run(&path) {
        Ok(bytes) => {
            println!("{path}: the default page rendered in ({bytes} bytes of HTML)");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("vramfit-prerender: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(path: &str) -> Result<usize, String> {
    let page = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (Some(a), Some(b)) = (page.find(START), page.find(END)) else {
        return Err(format!("no {START} … {END} placeholder"));
    };
    if b < a {
        return Err(format!("{END} comes before {START}"));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| e.to_string())?;
    let html = runtime.block_on(vramfit_web::prerender());
    let out = format!("{}{START}{html}{}", &page[..a], &page[b..]);
    std::fs::write(path, out).map_err(|e| e.to_string())?;
    Ok(html.len())
}
