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

// `page`'s nodes take `rendered`'s content: the same element keeps its
// identity (its attributes become the new ones, except `elementtiming`,
// which marks the element for paint timing, whatever it shows) and text
// nodes their new text; where the shapes differ, the new nodes replace it.
function morph(now, rendered) {
  if (now.nodeType !== rendered.nodeType || now.nodeName !== rendered.nodeName) {
    now.replaceWith(rendered);
    return;
  }
  if (now.nodeType === Node.TEXT_NODE) {
    if (now.data !== rendered.data) now.data = rendered.data;
    return;
  }
  if (now.nodeType !== Node.ELEMENT_NODE) {
    now.replaceWith(rendered);
    return;
  }
  for (const { name } of [...now.attributes]) {
    if (name !== "elementtiming" && !rendered.hasAttribute(name)) now.removeAttribute(name);
  }
  for (const { name, value } of [...rendered.attributes]) {
    if (now.getAttribute(name) !== value) now.setAttribute(name, value);
  }
  const before = [...now.childNodes];
  const after = [...rendered.childNodes];
  after.forEach((node, i) => (i < before.length ? morph(before[i], node) : now.appendChild(node)));
  for (const node of before.slice(after.length)) node.remove();
}

// The first-edit module (crates/vramfit-web/src/first_edit.rs): the
// estimator and the verdict's components, a fraction of the app's bytes, so
// on a slow network a number typed into the prerendered page is answered
// long before the app has arrived. It renders the verdict bar, the summary
// and the verdict for the page's fields as they are; they take the place of
// the page's own, and the cards below, which it does not compute, are
// marked as updating until the app starts. Once the app is ready, it
// finishes the answer in flight and stops (the app reads the same fields
// and replaces the page). Where it cannot load or answer, the page waits
// for the app as it would without it. An answer is put in place as soon as
// it is computed, even before the page's first frame: a page whose fields
// were typed into (or restored by the browser) is never painted with
// numbers for fields it no longer has, and the nodes stay, so the page's
// first paint is reported for them whatever they show.
// Returns the promise of its download (the app's waits for it, so the two
// do not share a slow network) and `handOver`, which stops it for the app.
function startFirstEdit(page) {
  const fields = ["batch", "seq", "image", "accum"];
  const compiled = WebAssembly.compileStreaming(
    fetch(new URL("vramfit_first_edit_bg.wasm", document.baseURI)));
  const ready = Promise.all([import("./vramfit_first_edit.js"), compiled])
    .then(([module, compiledModule]) =>
      module.default({ module_or_path: compiledModule }).then(() => module));
  // No render starts once stopped; nothing is put in place once released
  // (the app has started).
  let stopped = false;
  let released = false;
  let running = false;
  // Renders finished (answers put in place, or given up).
  let answers = 0;
  let again = false;
  // Called when the render in flight has finished, where the app waits for it.
  let handedOver = null;
  const edited = () => fields.some((id) => {
    const field = document.getElementById(id);
    return field && field.value !== field.defaultValue;
  });
  // `rendered`: a fragment of the module's nodes (built as the app builds
  // them; nothing here parses HTML). They are copied into the page's own
  // nodes where both have the same shape, so those nodes stay: a paint the
  // browser has made but not yet reported (first contentful paint, Element
  // Timing) still counts for them, and it is reported well after the frame
  // on a busy machine.
  const show = (rendered) => {
    for (const id of ["verdict-bar", "summary", "verdict"]) {
      const now = page.querySelector("#" + id);
      const replacement = rendered.getElementById(id);
      if (now && replacement) morph(now, replacement);
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
      .then((rendered) => {
        if (!released && rendered) show(rendered);
      })
      .catch(() => {
        stopped = true;
      })
      .finally(() => {
        running = false;
        answers += 1;
        if (handedOver) {
          handedOver();
          return;
        }
        if (again) {
          again = false;
          update();
        }
      });
  };
  page.addEventListener("input", (e) => {
    if (fields.includes(e.target.id)) update();
  });
  // Typed before this script ran (the page paints as it is parsed); an
  // edit since has started the render that reads it.
  ready.then(() => {
    if (!running && edited()) update();
  }, () => {
    stopped = true;
  });
  // Settles once a number typed into the page has its answer in place (at
  // once where nothing is typed or the module stopped; 3 s at most): the
  // app's download and compile wait for it, so that on a machine of few
  // cores they do not delay the frame that shows that answer.
  const answered = () => new Promise((resolve) => {
    const since = performance.now();
    const wait = () => !stopped && performance.now() - since < 3000 &&
      (running || (edited() && answers === 0));
    const poll = () => (wait() ? setTimeout(poll, 5) : resolve());
    poll();
  });
  return {
    downloaded: compiled.then(() => undefined, () => undefined),
    answered,
    // Stops it, once the render in flight (if any) has put its answer in
    // place: that answer is always nearer than the app's first. The app,
    // which waits for this, then reads the fields as they are. A render that
    // never settles (a trap in the module) holds the app back 3 s at most.
    handOver: () => new Promise((resolve) => {
      stopped = true;
      handedOver = () => {
        released = true;
        resolve();
      };
      if (running) {
        setTimeout(handedOver, 3000);
      } else {
        handedOver();
      }
    }),
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
  const firstEdit = prerendered && streaming ? startFirstEdit(document.getElementById("prerendered")) : null;
  // After the first-edit module's download, where there is one. The app's
  // bytes download from then on; compiling them, and the app's module,
  // wait for the first-edit module's answer to a number typed before then.
  const turn = firstEdit ? firstEdit.downloaded : Promise.resolve();
  const calm = firstEdit ? turn.then(() => firstEdit.answered()) : turn;
  const compiled = streaming
    ? Promise.all([turn.then(() => fetch(wasmUrl)), calm])
      .then(([response]) => WebAssembly.compileStreaming(response))
      .catch(() => undefined)
    : Promise.resolve(undefined);
  Promise.all([calm.then(() => import(moduleUrl)), compiled, painted])
    .then(([module, compiledModule]) => (firstEdit ? firstEdit.handOver() : Promise.resolve())
      .then(() => module.default(compiledModule ? { module_or_path: compiledModule } : undefined)))
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
