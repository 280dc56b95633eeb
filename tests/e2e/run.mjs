// Browser test of the built page (dist/, made by scripts/build-web.sh) in
// headless Chromium, driven by playwright-core. It serves dist/ itself on a
// free 127.0.0.1 port, checks what a user would check, fails on any console
// error, page error or failed request, and saves screenshots to out/.
//
// Usage: node tests/e2e/run.mjs   (env: DIST_DIR, CHROMIUM, E2E_TIMEOUT_MS)
// Exits 0 when every check passes, 1 otherwise, with one line per check.

import { chromium } from "playwright-core";
import { createServer } from "node:http";
import { mkdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");
const dist = path.resolve(repo, process.env.DIST_DIR ?? "dist");
const outDir = path.join(here, "out");
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const overallTimeout = Number(process.env.E2E_TIMEOUT_MS ?? 180_000);
const LAUNCH_ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];
const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".wasm": "application/wasm",
};

class CheckFailed extends Error {}

function expect(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

/** Serves `root` on 127.0.0.1 at a free port; resolves to { server, url }. */
async function serve(root) {
  const server = createServer(async (req, res) => {
    try {
      const { pathname } = new URL(req.url ?? "/", "http://127.0.0.1");
      const rel = decodeURIComponent(pathname).replace(/^\/+/, "") || "index.html";
      const file = path.resolve(root, rel);
      const type = MIME[path.extname(file)];
      if (!file.startsWith(root + path.sep) || !type || !["GET", "HEAD"].includes(req.method ?? "")) {
        res.writeHead(404).end();
        return;
      }
      const body = await readFile(file);
      res.writeHead(200, { "content-type": type, "content-length": body.length, "cache-control": "no-store" });
      res.end(req.method === "HEAD" ? undefined : body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  return { server, url: `http://127.0.0.1:${port}/` };
}

/** Records console errors, page errors and failed or 4xx/5xx requests of a page. */
function watch(page) {
  const problems = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console error: ${msg.text()}`);
  });
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("requestfailed", (req) => problems.push(`request failed: ${req.url()} (${req.failure()?.errorText})`));
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
    if (res.url().endsWith(".wasm") && res.headers()["content-type"] !== "application/wasm") {
      problems.push(`${res.url()} served as ${res.headers()["content-type"]}, not application/wasm`);
    }
  });
  return problems;
}

const bytesOf = async (page, selector) => Number(await page.getAttribute(selector, "data-bytes"));

/** Waits until `selector`'s data-bytes differs from `before`; returns the new value. */
async function nextBytes(page, selector, before) {
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

async function text(page, selector) {
  return ((await page.textContent(selector)) ?? "").trim();
}

/** The checks on a working page, in order; each gets the shared page. */
const checks = [
  ["page loads and shows an estimate", async (page) => {
    await page.waitForSelector("#peak-allocated[data-bytes]", { timeout: 30_000 });
    expect((await page.locator("#load-error").count()) === 0, "the load-error message is shown");
    const allocated = await bytesOf(page, "#peak-allocated");
    const reserved = await bytesOf(page, "#peak-reserved");
    const device = await bytesOf(page, "#device-used");
    expect(allocated > 0, `peak allocated is ${allocated}`);
    expect(allocated <= reserved && reserved < device, `expected allocated ≤ reserved < device used, got ${allocated}, ${reserved}, ${device}`);
    expect(["true", "false"].includes(await page.getAttribute("#verdict", "data-fits")), "#verdict has no data-fits");
    expect(Number(await page.getAttribute("#max-batch", "data-value")) >= 0, "#max-batch has no data-value");
    const rows = await page.$$eval("#breakdown tbody tr[data-bytes]", (trs) => trs.map((tr) => Number(tr.dataset.bytes)));
    expect(rows.length === 6, `the breakdown has ${rows.length} rows, not 6`);
    const sum = rows.reduce((a, b) => a + b, 0);
    expect(sum === allocated, `breakdown rows add up to ${sum}, peak allocated is ${allocated}`);
    expect((await page.getAttribute("#results", "data-state")) === "fresh", "the first result is marked stale");
  }],

  ["a larger batch raises peak allocated", async (page) => {
    const before = await bytesOf(page, "#peak-allocated");
    await page.fill("#batch", "32");
    const after = await nextBytes(page, "#peak-allocated", before);
    expect(after > before, `batch 8 → 32 changed peak allocated from ${before} to ${after}, not upward`);
    expect((await text(page, "#summary")).includes("batch 32"), `summary does not say batch 32: ${await text(page, "#summary")}`);
  }],

  ["an invalid batch shows a message and keeps the last result", async (page) => {
    const shown = await bytesOf(page, "#peak-allocated");
    for (const [typed, message] of [["abc", "whole number"], ["0", "at least 1"], ["", "Enter a batch size"]]) {
      await page.fill("#batch", typed);
      await page.waitForSelector("#batch-error", { state: "visible", timeout: 5_000 });
      const error = await text(page, "#batch-error");
      expect(error.includes(message), `typed ${JSON.stringify(typed)}: message is ${JSON.stringify(error)}, expected it to mention ${JSON.stringify(message)}`);
      expect((await page.getAttribute("#batch", "aria-invalid")) === "true", `typed ${JSON.stringify(typed)}: #batch is not aria-invalid`);
      expect((await bytesOf(page, "#peak-allocated")) === shown, `typed ${JSON.stringify(typed)}: the result on screen changed`);
      expect((await page.getAttribute("#results", "data-state")) === "stale", `typed ${JSON.stringify(typed)}: result not marked stale`);
      expect(await page.isVisible("#notice"), `typed ${JSON.stringify(typed)}: no notice that the result is the last valid one`);
    }
    await page.fill("#batch", "32");
    await page.waitForSelector("#batch-error", { state: "detached", timeout: 5_000 });
    expect((await page.getAttribute("#results", "data-state")) === "fresh", "fixing the batch did not refresh the result");
  }],

  ["the estimator's rejection shows next to the sequence length", async (page) => {
    await page.fill("#seq", "4096");
    await page.waitForSelector("#seq-error", { state: "visible", timeout: 5_000 });
    const error = await text(page, "#seq-error");
    expect(error.includes("1024"), `expected GPT-2's 1024 positions in the message, got ${JSON.stringify(error)}`);
    await page.fill("#seq", "512");
    await page.waitForSelector("#seq-error", { state: "detached", timeout: 5_000 });
  }],

  ["a CNN replaces the sequence length with the image size", async (page) => {
    const before = await bytesOf(page, "#peak-allocated");
    await page.selectOption("#model", "resnet50");
    await page.waitForSelector("#image", { timeout: 5_000 });
    expect((await page.locator("#seq").count()) === 0, "#seq is still shown for ResNet-50");
    expect((await page.inputValue("#image")) === "224", `image size is ${await page.inputValue("#image")}, expected 224`);
    const group = await page.$eval("#model option:checked", (o) => o.parentElement?.getAttribute("label"));
    expect(group === "CNN", `ResNet-50 is in optgroup ${JSON.stringify(group)}, expected "CNN"`);
    await nextBytes(page, "#peak-allocated", before);
    expect((await text(page, "#summary")).startsWith("ResNet-50"), `summary: ${await text(page, "#summary")}`);
  }],

  ["a GPU too small says it does not fit", async (page) => {
    await page.selectOption("#model", "llama-2-7b");
    await page.selectOption("#precision", "fp32");
    await page.waitForSelector('#verdict[data-fits="false"]', { timeout: 10_000 });
    expect((await text(page, "#verdict")).includes("Does not fit"), `verdict: ${await text(page, "#verdict")}`);
    await page.fill("#batch", "1");
    await page.selectOption("#gpu", "h200");
    await page.waitForSelector('#verdict[data-fits="true"]', { timeout: 10_000 });
  }],

  ["'Use' sets the batch to the largest that fits", async (page) => {
    await page.selectOption("#model", "gpt2");
    await page.selectOption("#precision", "amp-bf16");
    await page.selectOption("#gpu", "rtx-4090");
    await page.fill("#batch", "8");
    await page.waitForSelector("#verdict .link-button", { timeout: 5_000 });
    const max = await page.getAttribute("#max-batch", "data-value");
    await page.click("#verdict .link-button");
    await page.waitForFunction((m) => document.querySelector("#batch")?.value === m, max, { timeout: 5_000 });
    expect((await page.getAttribute("#verdict", "data-fits")) === "true", "the largest batch that fits does not fit");
    await page.fill("#batch", "8");
    await page.waitForSelector("#verdict .link-button", { timeout: 5_000 });
  }],
];

async function screenshots(browser, url) {
  const shots = [
    ["desktop.png", { viewport: { width: 1280, height: 900 } }],
    ["mobile.png", { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true }],
    ["desktop-dark.png", { viewport: { width: 1280, height: 900 }, colorScheme: "dark" }],
    ["mobile-dark.png", { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, colorScheme: "dark" }],
  ];
  const problems = [];
  for (const [name, options] of shots) {
    const context = await browser.newContext({ colorScheme: "light", ...options });
    const page = await context.newPage();
    const seen = watch(page);
    await page.goto(url);
    await page.waitForSelector("#peak-allocated[data-bytes]", { timeout: 30_000 });
    await page.screenshot({ path: path.join(outDir, name), fullPage: true });
    await context.close();
    problems.push(...seen.map((p) => `${name}: ${p}`));
  }
  expect(problems.length === 0, problems.join("\n  "));
}

async function failureIsVisible(browser, url) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.route("**/*.wasm", (route) => route.abort());
  const errors = [];
  page.on("pageerror", (err) => errors.push(err.message));
  await page.goto(url);
  await page.waitForSelector("#load-error", { state: "visible", timeout: 15_000 });
  const message = await text(page, "#load-error");
  expect(message.startsWith("The calculator could not start."), `load error reads ${JSON.stringify(message)}`);
  expect(errors.length === 0, `uncaught errors: ${errors.join("; ")}`);
  await context.close();
}

async function noscriptIsVisible(browser, url) {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(url);
  const body = await page.innerText("body");
  expect(body.includes("vramfit needs JavaScript"), "without JavaScript the page does not say it needs it");
  expect(!(await page.isVisible("#boot")), "without JavaScript the page still says it is loading");
  await context.close();
}

async function main() {
  try {
    await stat(path.join(dist, "index.html"));
  } catch {
    throw new CheckFailed(`${dist}/index.html is missing: run scripts/build-web.sh first`);
  }
  try {
    await stat(executablePath);
  } catch {
    throw new CheckFailed(`no Chromium at ${executablePath} (apt-get install -y chromium, or set CHROMIUM)`);
  }
  await mkdir(outDir, { recursive: true });
  const { server, url } = await serve(dist);
  const browser = await chromium.launch({ executablePath, args: LAUNCH_ARGS });
  let passed = 0;
  let failed = 0;
  const run = async (name, fn) => {
    try {
      await fn();
      passed += 1;
      console.log(`ok   ${name}`);
    } catch (err) {
      failed += 1;
      console.log(`FAIL ${name}\n  ${err instanceof CheckFailed ? err.message : err.stack}`);
    }
  };
  try {
    console.log(`serving ${dist} at ${url}; ${await browser.version()} at ${executablePath}`);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems = watch(page);
    let reported = 0;
    // Fails a check on any problem since the previous check (the first one
    // also gets those from loading the page).
    const noNewProblems = () => {
      const fresh = problems.slice(reported);
      reported = problems.length;
      expect(fresh.length === 0, fresh.join("\n  "));
    };
    await page.goto(url);
    for (const [name, fn] of checks) {
      await run(name, async () => {
        try {
          await fn(page);
        } catch (err) {
          await page.screenshot({ path: path.join(outDir, "failure.png"), fullPage: true }).catch(() => {});
          const fresh = problems.slice(reported);
          reported = problems.length;
          if (fresh.length > 0 && err instanceof Error) err.message += `\n  ${fresh.join("\n  ")}`;
          throw err;
        }
        noNewProblems();
      });
    }
    await page.screenshot({ path: path.join(outDir, "after-checks.png"), fullPage: true });
    await context.close();
    await run("no console error, page error or failed request after the checks", async () => noNewProblems());
    await run("a wasm that fails to load shows an error, not a blank page", () => failureIsVisible(browser, url));
    await run("without JavaScript the page says it needs it", () => noscriptIsVisible(browser, url));
    await run("screenshots (desktop 1280, mobile 390, light and dark) have no errors", () => screenshots(browser, url));
  } finally {
    await browser.close();
    server.close();
  }
  console.log(`screenshots in ${path.relative(process.cwd(), outDir) || "."}/`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

const timer = setTimeout(() => {
  console.error(`FAIL: the browser test did not finish within ${overallTimeout / 1000} s`);
  process.exit(1);
}, overallTimeout);
timer.unref();

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`FAIL: ${err instanceof CheckFailed ? err.message : err.stack}`);
    process.exit(1);
  },
);
