// Starts the WebAssembly app (index.html), widget (embed.html) or Benchmark
// page (bench.html, framed by the app's Benchmark tab); the widget's and the
// Benchmark page's roots name their own module in data-module. If it cannot start, it says so instead of
// leaving a blank or forever-loading page. A file, not an inline script:
// the pages' Content-Security-Policy allows no inline script.
const root = document.getElementById("app") ?? document.getElementById("widget") ?? document.getElementById("bench-page");
const framed = root.id !== "app";
const moduleUrl = root.dataset.module ?? "./vramfit_web.js";
// Messages go where the results would be, under the header. Before the app
// has mounted, that is the loading shell's: the prerendered page (index.html)
// cannot work without the app, so it goes.
const slot = () => {
  if (document.getElementById("prerendered")) {
    document.getElementById("prerendered").remove();
    document.documentElement.classList.add("no-prerender");
  }
  return root.querySelector("main") ?? root;
};

function showFailure(title, detail) {
  const box = document.createElement("div");
  box.id = "load-error";
  box.className = "notice notice-error";
  box.setAttribute("role", "alert");
  const strong = document.createElement("strong");
  strong.textContent = title + " ";
  box.append(strong, document.createTextNode(detail));
  slot().replaceChildren(box);
  root.removeAttribute("aria-busy");
}

// A fallback for a WebAssembly trap the app's own panic notice did not
// cover (it normally shows first, in the page's language). Other errors
// (a ResizeObserver loop notice, an extension's script) are not crashes.
function showCrash(err) {
  if (!(err instanceof WebAssembly.RuntimeError)) return;
  if (document.getElementById("runtime-error")) return;
  const box = document.createElement("div");
  box.id = "runtime-error";
  box.className = "notice notice-error";
  box.setAttribute("role", "alert");
  box.textContent = "The calculator stopped after an internal error" +
    (err && err.message ? " (" + err.message + ")" : "") + ". Reload the page to start again.";
  slot().prepend(box);
}

// In a frame (embed.js's, or the app's Benchmark tab), report the page's
// height to the embedding page so the frame fits its content. Schema:
// { type: "vramfit:resize", v: 1, height: CSS pixels }. Only a height leaves
// the frame, so any target origin will do; embed.js and the app accept it
// only from their own frames.
function reportHeight() {
  if (window.parent === window || !framed) return;
  let last = 0;
  const post = () => {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height !== last) {
      last = height;
      window.parent.postMessage({ type: "vramfit:resize", v: 1, height }, "*");
    }
  };
  new ResizeObserver(post).observe(document.body);
  post();
}

if (typeof WebAssembly !== "object") {
  showFailure("This browser cannot run the calculator.",
    "It needs WebAssembly, which every current browser supports; it may be turned off here.");
  reportHeight();
} else {
  // The prerendered page (index.html) paints before the app starts and
  // replaces it: the module and the wasm download meanwhile (preloaded), but
  // starting waits until the browser reports the first contentful paint —
  // the frame is then on screen, and so is its timing (replacing a node
  // before its paint is presented loses its Element Timing entry). A hidden
  // tab paints nothing: it starts at once, or when it is hidden meanwhile.
  const prerendered = document.getElementById("prerendered") &&
    !document.documentElement.classList.contains("no-prerender");
  const painted = !prerendered || document.visibilityState === "hidden"
    ? Promise.resolve()
    : new Promise((resolve) => {
      const start = () => setTimeout(resolve, 0);
      document.addEventListener("visibilitychange", start, { once: true });
      // A browser without paint timing starts after the next frame.
      if (!PerformanceObserver.supportedEntryTypes?.includes("paint")) {
        requestAnimationFrame(start);
        return;
      }
      new PerformanceObserver((list, observer) => {
        if (list.getEntriesByName("first-contentful-paint").length > 0) {
          observer.disconnect();
          start();
        }
      }).observe({ type: "paint", buffered: true });
    });
  // The wasm compiles while the prerendered page paints (the compiler runs
  // off the main thread as the bytes stream in, answering the preload), so
  // the app starts from a compiled module once the paint is on screen.
  // wasm-bindgen names the binary after the module, beside it. A browser
  // without streaming compilation, or a compile that fails (a server that
  // sends another MIME type), leaves fetching to wasm-bindgen's own start.
  const wasmUrl = new URL(moduleUrl.replace(/\.js$/, "_bg.wasm"), document.baseURI);
  const compiled = typeof WebAssembly.compileStreaming === "function"
    ? WebAssembly.compileStreaming(fetch(wasmUrl)).catch(() => undefined)
    : Promise.resolve(undefined);
  Promise.all([import(moduleUrl), compiled, painted])
    .then(([module, compiledModule]) =>
      module.default(compiledModule ? { module_or_path: compiledModule } : undefined))
    .then(() => {
      root.removeAttribute("aria-busy");
      // A Rust panic aborts as a WebAssembly trap; the page would freeze silently.
      window.addEventListener("error", (e) => showCrash(e.error));
      window.addEventListener("unhandledrejection", (e) => showCrash(e.reason));
      reportHeight();
    })
    .catch((err) => {
      showFailure("The calculator could not start.",
        "Reload the page; if this persists, an extension or policy may be blocking WebAssembly. (" +
        (err && err.message ? err.message : String(err)) + ")");
      reportHeight();
    });
}
