// Browser test of the built site (dist/, made by scripts/build-web.sh) in
// headless Chromium, driven by playwright-core. It serves dist/ itself on a
// free 127.0.0.1 port (with the pages' Content-Security-Policy also sent as
// a header), checks what a user would check, fails on any console error,
// page error or failed request, scans with axe-core, saves screenshots to
// out/, and prints the size and speed budgets. The checks of the calculator
// are in checks.mjs, share links, the CSP, XSS probes and publishing in
// links.mjs, the embeddable widget and the demo docs page in embed.mjs, the
// axe and language scans in audit.mjs, the measurements in budgets.mjs,
// shared helpers (and the test server) in helpers.mjs.
//
// Usage: node tests/e2e/run.mjs   (env: DIST_DIR, CHROMIUM, E2E_TIMEOUT_MS)
// Exits 0 when every check passes, 1 otherwise, with one line per check.

import { chromium } from "playwright-core";
import { mkdir, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { firstLoadSizes, firstVerdictTimes, printBudgets, recomputeTimes } from "./budgets.mjs";
import { checks } from "./checks.mjs";
import { benchChecks, launchWebgpu, printBenchNumbers } from "./bench.mjs";
import { embedChecks } from "./embed.mjs";
import { CheckFailed, expect, LAUNCH_ARGS, outDir, pageCsp, serve, sharedContext, text, watch } from "./helpers.mjs";
import { linkChecks } from "./links.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");
const dist = path.resolve(repo, process.env.DIST_DIR ?? "dist");
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const overallTimeout = Number(process.env.E2E_TIMEOUT_MS ?? 600_000);
const SHOTS = [
  ["desktop", { viewport: { width: 1280, height: 900 } }],
  ["mobile", { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true }],
];

async function screenshots(browser, url) {
  const problems = [];
  for (const [size, options] of SHOTS) {
    for (const [variant, extra] of [["", {}], ["-dark", { colorScheme: "dark" }], ["-zh", { locale: "zh-CN" }]]) {
      const name = `${size}${variant}.png`;
      const context = await browser.newContext({ colorScheme: "light", locale: "en-US", ...options, ...extra });
      const page = await context.newPage();
      const seen = watch(page);
      await page.goto(url);
      // The cards below the breakdown follow the first verdict in the next task.
      await page.waitForSelector('#results[data-complete="true"]', { timeout: 30_000 });
      if (variant === "-zh") {
        expect((await page.getAttribute("html", "lang")) === "zh-CN", "a zh-CN browser did not get the Chinese page");
      }
      if (variant === "-dark") {
        expect((await page.getAttribute("html", "data-theme")) === "dark", "a dark-scheme browser did not get the dark theme");
      }
      await page.screenshot({ path: path.join(outDir, name), fullPage: true });
      if (size === "desktop" && variant === "") {
        for (const id of ["verdict", "techniques", "batch-chart", "timeline", "layers"]) {
          await page.locator(`#${id}`).screenshot({ path: path.join(outDir, `card-${id}.png`) });
        }
      }
      await context.close();
      problems.push(...seen.map((p) => `${name}: ${p}`));
    }
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

/**
 * A Rust panic (forced by `#panic-test`, which only debug builds honour)
 * shows a notice with a Reload button instead of a dead page, in the page's
 * language; the configuration in the address survives the reload.
 */
async function crashIsRecoverable(browser, debugDist) {
  const { server, url } = await serve(debugDist);
  const context = await browser.newContext({ locale: "zh-CN" });
  try {
    const page = await context.newPage();
    await page.goto(`${url}?v=1&b=32#panic-test`);
    await page.waitForSelector("#runtime-error", { state: "visible", timeout: 30_000 });
    const message = await text(page, "#runtime-error");
    expect(message.startsWith("计算器遇到内部错误。"), `crash notice reads ${JSON.stringify(message)}`);
    expect(await page.isVisible("#crash-reload"), "no Reload button");
    // Reloading (here: the same address without the test hook) restores the configuration.
    await page.goto(`${url}?v=1&b=32`);
    await page.waitForSelector('#results[data-complete="true"]', { timeout: 30_000 });
    expect((await page.inputValue("#batch")) === "32", "the configuration did not survive the reload");
    expect(!(await page.isVisible("#runtime-error")), "the crash notice came back");
  } finally {
    await context.close();
    server.close();
  }
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
  const { server, url } = await serve(dist, { csp: await pageCsp(dist) });
  const browser = await chromium.launch({ executablePath, args: LAUNCH_ARGS });
  let passed = 0;
  let failed = 0;
  const benchNumbers = {};
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
    const context = await sharedContext(browser);
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
    const budgets = {};
    await run("budgets are measured", async () => {
      budgets.recompute = await recomputeTimes(page);
      budgets.sizes = await firstLoadSizes(browser, url);
      budgets.first = await firstVerdictTimes(browser, url);
    });
    await context.close();
    await run("no console error, page error or failed request after the checks", async () => noNewProblems());
    const env = { browser, url, dist, repo };
    for (const [name, fn] of [...linkChecks, ...embedChecks]) {
      await run(name, () => fn(env));
    }
    // The Benchmark tab runs in a second browser with WebGPU on SwiftShader (bench.mjs).
    const gpuBrowser = await launchWebgpu(executablePath, LAUNCH_ARGS);
    try {
      for (const [name, fn] of benchChecks(benchNumbers)) {
        await run(name, () => fn({ ...env, gpuBrowser }));
      }
    } finally {
      await gpuBrowser.close();
    }
    await run("a wasm that fails to load shows an error, not a blank page", () => failureIsVisible(browser, url));
    await run("without JavaScript the page says it needs it", () => noscriptIsVisible(browser, url));
    if (process.env.DEBUG_DIST) {
      await run("a panic shows a recoverable notice, and a reload restores the configuration", () =>
        crashIsRecoverable(browser, path.resolve(repo, process.env.DEBUG_DIST)));
    } else {
      console.log("skip a panic shows a recoverable notice (set DEBUG_DIST to a WEB_PROFILE=dev build; scripts/test.sh does)");
    }
    await run("screenshots (desktop 1280, mobile 390; light, dark, 简体中文) have no errors", () => screenshots(browser, url));
    printBudgets(budgets);
    printBenchNumbers(benchNumbers);
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
