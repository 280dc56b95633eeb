// Runs before the first paint (a classic script in index.html's <head>; a
// file, not an inline script: the page's CSP allows none). index.html holds
// the default page rendered at build time; it shows only when the app will
// start with exactly that page: no settings in the address (a share link, the
// Benchmark tab) and a browser language the app shows in English. Otherwise
// the loading line shows, so a link never shows the default numbers first.
//
// It also asks for the WebAssembly boot.js starts with, before any other
// download competes for the network: with the prerendered page, the small
// first-edit module (an edit made before the app starts is answered by it);
// without it, the app's.
(function () {
  const language = (navigator.language || "").split(/[-_]/)[0].toLowerCase();
  const prerendered = !(location.search.length > 1 || location.hash.length > 1 || language === "zh");
  if (!prerendered) {
    document.documentElement.classList.add("no-prerender");
  }
  const preload = (href, as) => {
    const link = document.createElement("link");
    if (as === "module") {
      link.rel = "modulepreload";
    } else {
      link.rel = "preload";
      link.as = "fetch";
      link.type = "application/wasm";
      link.crossOrigin = "anonymous";
    }
    link.href = href;
    document.head.append(link);
  };
  if (prerendered) {
    preload("vramfit_first_edit.js", "module");
    preload("vramfit_first_edit_bg.wasm", "fetch");
  } else {
    preload("vramfit_web.js", "module");
    preload("vramfit_web_bg.wasm", "fetch");
  }
})();
