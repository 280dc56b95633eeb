// vramfit embed script: turns each <div data-vramfit="QUERY"> on the page
// into a frame of the vramfit widget (embed.html beside this script) and
// keeps each frame as tall as its content.
//
//   <div data-vramfit="v=1&amp;m=resnet50&amp;b=64"
//        data-lock="m,g" data-curve="1" data-theme="dark" data-lang="zh-CN"
//        data-title="..."></div>
//   <script src="https://vramfit.github.io/vramfit/embed.js" async></script>
//
// data-vramfit holds a share link's query (a whole link works too); the
// other attributes add the widget's keys. Nothing from the attributes is
// ever inserted as markup: values only become URL parameters of the frame
// (set through URLSearchParams, so they are encoded) or its title (text).
// The host page's CSP needs `frame-src` for this script's origin.
(() => {
  const script = document.currentScript;
  if (!script || !script.src) return;
  const base = new URL(".", script.src);
  const origin = base.origin;
  const frames = new Set();
  const OPTIONS = { lock: "lock", curve: "curve", theme: "theme", lang: "lang", units: "units" };
  const MIN_HEIGHT = 120;
  const MAX_HEIGHT = 4000;

  function widgetUrl(el) {
    const url = new URL("embed.html", base);
    const given = (el.getAttribute("data-vramfit") || "").trim();
    const query = given.includes("?") ? given.slice(given.indexOf("?") + 1).split("#")[0] : given;
    for (const [key, value] of new URLSearchParams(query)) url.searchParams.append(key, value);
    for (const [attr, key] of Object.entries(OPTIONS)) {
      const value = el.getAttribute("data-" + attr);
      if (value !== null) url.searchParams.set(key, value);
    }
    return url;
  }

  function mount(el) {
    if (el.dataset.vramfitMounted) return;
    el.dataset.vramfitMounted = "1";
    const frame = document.createElement("iframe");
    frame.src = widgetUrl(el).href;
    frame.title = el.getAttribute("data-title") || "vramfit GPU memory estimate";
    frame.loading = "lazy";
    frame.referrerPolicy = "strict-origin-when-cross-origin";
    // Scripts and its own origin (to load its WebAssembly); popups for
    // "Open in vramfit"; no top navigation, forms or dialogs.
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox");
    frame.className = "vramfit-frame";
    frame.style.width = "100%";
    frame.style.height = "360px";
    frame.style.border = "0";
    frame.style.display = "block";
    el.replaceChildren(frame);
    frames.add(frame);
  }

  // Resize messages: accepted only from this script's origin, from one of
  // its own frames, in the documented shape.
  window.addEventListener("message", (event) => {
    if (event.origin !== origin) return;
    let frame = null;
    for (const f of frames) if (f.contentWindow === event.source) frame = f;
    const data = event.data;
    if (!frame || !data || typeof data !== "object" || data.type !== "vramfit:resize" || data.v !== 1) return;
    const height = Number(data.height);
    if (!Number.isFinite(height)) return;
    frame.style.height = Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height))) + "px";
  });

  const scan = () => document.querySelectorAll("[data-vramfit]").forEach(mount);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", scan);
  else scan();
})();
