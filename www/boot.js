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

// The first-edit module (crates/vramfit-web/src/first_edit.rs): the
// estimator and the verdict's components, a fraction of the app's bytes, so
// on a slow network a number typed into the prerendered page is answered
// long before the app has arrived. It renders the verdict bar, the summary
// and the verdict for the page's fields as they are; they replace the page's
// own, and the cards below, which it does not compute, are marked as
// updating until the app starts. It never runs once the app is starting
// (the app reads the same fields and replaces the page). Where it cannot
// load or answer, the page waits for the app as it would without it.
// It computes an answer as soon as it can, but puts it in place only once
// the page has painted (`painted`), as the app starts then: the page's own
// verdict is on screen, and timed, before anything replaces it.
// Returns the promise of its download (the app's waits for it, so the two
// do not share a slow network) and a function that stops it.
function startFirstEdit(page, painted) {
  const fields = ["batch", "seq", "image", "accum"];
  const compiled = WebAssembly.compileStreaming(
    fetch(new URL("vramfit_first_edit_bg.wasm", document.baseURI)));
  const ready = Promise.all([import("./vramfit_first_edit.js"), compiled])
    .then(([module, compiledModule]) =>
      module.default({ module_or_path: compiledModule }).then(() => module));
  let stopped = false;
  let running = false;
  let again = false;
  const fcpSeen = () => typeof performance.getEntriesByName === "function" &&
    performance.getEntriesByName("first-contentful-paint").length > 0;
  const edited = () => fields.some((id) => {
    const field = document.getElementById(id);
    return field && field.value !== field.defaultValue;
  });
  // `rendered`: a fragment of the module's nodes (built as the app builds
  // them; nothing here parses HTML).
  const show = (rendered) => {
    for (const id of ["verdict-bar", "summary", "verdict"]) {
      const now = page.querySelector("#" + id);
      const replacement = rendered.getElementById(id);
      if (now && replacement) now.replaceWith(replacement);
    }
  };
  // One render at a time; edits typed meanwhile are read by the next.
  const update = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    // Not the app's page any more: the app replaces it rather than hydrate
    // it, even where the fields are typed back (browser::hydratable_root).
    page.dataset.edited = "";
    page.querySelector("#results")?.classList.add("pending");
    ready
      .then((module) => module.render())
      // The paint may be on screen before `painted` is told (its observer
      // waits for the main thread): then at once.
      .then((rendered) => (fcpSeen() ? Promise.resolve() : painted).then(() => {
        if (!stopped && rendered) show(rendered);
      }))
      .catch(() => {
        stopped = true;
      })
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          update();
        }
      });
  };
  page.addEventListener("input", (e) => {
    if (fields.includes(e.target.id)) update();
  });
  // Typed before this script ran (the page paints as it is parsed).
  ready.then(() => {
    if (edited()) update();
  }, () => {
    stopped = true;
  });
  return {
    downloaded: compiled.then(() => undefined, () => undefined),
    stop: () => {
      stopped = true;
    },
  };
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
  const streaming = typeof WebAssembly.compileStreaming === "function";
  const firstEdit = prerendered && streaming ? startFirstEdit(document.getElementById("prerendered"), painted) : null;
  // After the first-edit module's download, where there is one.
  const turn = firstEdit ? firstEdit.downloaded : Promise.resolve();
  const compiled = streaming
    ? turn.then(() => WebAssembly.compileStreaming(fetch(wasmUrl))).catch(() => undefined)
    : Promise.resolve(undefined);
  Promise.all([turn.then(() => import(moduleUrl)), compiled, painted])
    .then(([module, compiledModule]) => {
      firstEdit?.stop();
      return module.default(compiledModule ? { module_or_path: compiledModule } : undefined);
    })
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
