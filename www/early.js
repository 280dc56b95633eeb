// Runs before the first paint (a classic script in index.html's <head>; a
// file, not an inline script: the page's CSP allows none). index.html holds
// the default page rendered at build time; it shows only when the app will
// start with exactly that page: no settings in the address (a share link, the
// Benchmark tab) and a browser language the app shows in English. Otherwise
// the loading line shows, so a link never shows the default numbers first.
(function () {
  const language = (navigator.language || "").split(/[-_]/)[0].toLowerCase();
  if (location.search.length > 1 || location.hash.length > 1 || language === "zh") {
    document.documentElement.classList.add("no-prerender");
  }
})();
