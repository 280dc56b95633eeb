// Shared by run.mjs and checks.mjs: the failure type, assertions, reading
// values off the page, and where screenshots go.

import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Screenshots and failure captures land here. */
export const outDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "out");

export class CheckFailed extends Error {}

export function expect(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

/** Records console errors, page errors and failed or 4xx/5xx requests of a page. */
export function watch(page) {
  const problems = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console error: ${msg.text()}`);
  });
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("requestfailed", (req) => {
    const why = req.failure()?.errorText ?? "";
    // A request cancelled because the test navigated on (net::ERR_ABORTED, e.g. the
    // favicon of a page left at once) is not a failure of the site.
    if (!why.includes("ERR_ABORTED")) problems.push(`request failed: ${req.url()} (${why})`);
  });
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
    if (res.url().endsWith(".wasm") && res.headers()["content-type"] !== "application/wasm") {
      problems.push(`${res.url()} served as ${res.headers()["content-type"]}, not application/wasm`);
    }
  });
  return problems;
}

/**
 * A number's data-bytes once the report on screen is complete: the numbers under the verdict follow
 * the complete report (results.rs), a frame or so after an edit's verdict.
 */
export async function bytesOf(page, selector) {
  await page.waitForFunction(() => document.querySelector("#results")?.dataset.complete !== "false", null, { timeout: 10_000 });
  return Number(await page.getAttribute(selector, "data-bytes"));
}

/** Waits until `selector`'s data-bytes differs from `before`; returns the new value. */
export async function nextBytes(page, selector, before) {
  await page.waitForFunction(
    ([sel, old]) => {
      const v = document.querySelector(sel)?.getAttribute("data-bytes");
      return v !== undefined && v !== null && v !== String(old);
    },
    [selector, before],
    { timeout: 10_000 },
  );
  return bytesOf(page, selector);
}

/**
 * The page's address once it reads `want` (or after 5 s, whatever it reads then): the app rewrites
 * it in a task after the report completes (hooks.rs `use_url_state`), not with the first verdict.
 */
export async function settledSearch(page, want) {
  await page.waitForFunction((w) => location.search === w, want, { timeout: 5_000 }).catch(() => {});
  return page.evaluate(() => location.search);
}

export async function text(page, selector) {
  return ((await page.textContent(selector)) ?? "").trim();
}

// A real Hugging Face config (meta-llama/Llama-2-7b-hf), as downloaded.

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".wasm": "application/wasm",
};

/** The Content-Security-Policy of index.html and embed.html (their <meta>), read from the file. */
export async function pageCsp(root) {
  const html = await readFile(path.join(root, "index.html"), "utf8");
  return html.match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)?.[1] ?? "";
}

/**
 * Serves `root` on `host` at a free port; resolves to { server, url }.
 * `extra` maps a path ("/host.html") to a page to serve instead of a file;
 * `csp`, when given, is sent as a header with every HTML file.
 */
export async function serve(root, { host = "127.0.0.1", csp = "", extra = {} } = {}) {
  const server = createServer(async (req, res) => {
    try {
      const { pathname } = new URL(req.url ?? "/", "http://127.0.0.1");
      if (extra[pathname] !== undefined) {
        res.writeHead(200, { "content-type": MIME[".html"], "cache-control": "no-store" }).end(extra[pathname]);
        return;
      }
      const rel = decodeURIComponent(pathname).replace(/^\/+/, "") || "index.html";
      const file = path.resolve(root, rel);
      const type = MIME[path.extname(file)];
      if (!file.startsWith(root + path.sep) || !type || !["GET", "HEAD"].includes(req.method ?? "")) {
        res.writeHead(404).end();
        return;
      }
      const body = await readFile(file);
      const headers = { "content-type": type, "content-length": body.length, "cache-control": "no-store" };
      if (csp && type.startsWith("text/html")) headers["content-security-policy"] = csp;
      res.writeHead(200, headers);
      res.end(req.method === "HEAD" ? undefined : body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, resolve);
  });
  const { port } = server.address();
  return { server, url: `http://${host}:${port}/` };
}

// Chromium's flags for every check (run.mjs, only.mjs).
export const LAUNCH_ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/**
 * The context of the calculator's shared page (run.mjs, only.mjs): it lets
 * axe-core be injected as an inline script; the CSP itself is tested in
 * links.mjs with a context that enforces it.
 */
export function sharedContext(browser) {
  return browser.newContext({
    viewport: { width: 1280, height: 900 },
    locale: "en-US",
    colorScheme: "light",
    bypassCSP: true,
    permissions: ["clipboard-read", "clipboard-write"],
  });
}
