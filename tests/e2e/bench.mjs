// The Benchmark tab in headless Chromium: the quick suite on SwiftShader's
// WebGPU (fp32 only: SwiftShader has no shader-f16), cancel, the exports,
// and each failure the tab must explain instead of freezing. Faults are
// injected from the test with init scripts that patch the WebGPU API (no
// test code in the site) or with a route that blocks the module.
//
// WebGPU in headless Chromium on a machine without a GPU: --enable-unsafe-webgpu
// with --use-webgpu-adapter=swiftshader (Dawn's Vulkan backend on SwiftShader,
// bundled with Chromium). The main suite's browser runs with --disable-gpu,
// where navigator.gpu exists but offers no adapter: checked here too.

import path from "node:path";
import { readFile } from "node:fs/promises";
import { chromium } from "playwright-core";
import { englishLeft, pageStrings } from "./audit.mjs";
import { expect, outDir, text, watch } from "./helpers.mjs";

export const WEBGPU_ARGS = ["--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"];

/**
 * Opens the calculator on the Benchmark tab, whose content is bench.html in
 * a frame; `init` is an init script (a fault), installed in every frame.
 * Returns the frame as `page` (the checks query it as they would a page)
 * and the calculator's page as `top`.
 */
async function openBench(browser, url, { init, route, locale = "en-US", colorScheme = "light", viewport } = {}) {
  const context = await browser.newContext({ locale, colorScheme, viewport: viewport ?? { width: 1280, height: 900 } });
  const top = await context.newPage();
  const problems = watch(top);
  const requests = [];
  top.on("request", (req) => requests.push(new URL(req.url()).pathname));
  if (init) await top.addInitScript(init);
  if (route) await top.route(route, (r) => r.abort());
  await top.goto(`${url}#benchmark`);
  const frame = await (await top.waitForSelector("#panel-benchmark:not([hidden]) #bench-frame", { timeout: 30_000 })).contentFrame();
  await frame.waitForSelector("#bench", { timeout: 30_000 });
  return { context, page: frame, top, problems, requests };
}

/** Waits for the failure message; returns { kind, text }. */
async function failure(page, timeout = 60_000) {
  await page.waitForSelector("#bench-error", { timeout });
  return { kind: await page.getAttribute("#bench-error", "data-kind"), text: await text(page, "#bench-error") };
}

/** The calculator still answers after the tab failed. */
async function calculatorWorks(page) {
  await page.click("#tab-calculator");
  await page.waitForSelector("#panel-calculator:not([hidden]) #peak-allocated[data-bytes]", { timeout: 30_000 });
  const before = await page.getAttribute("#peak-allocated", "data-bytes");
  await page.fill("#batch", "3");
  await page.waitForFunction((b) => document.querySelector("#peak-allocated")?.getAttribute("data-bytes") !== b, before, { timeout: 10_000 });
  expect((await page.locator("#runtime-error, #load-error").count()) === 0, "the calculator shows a crash message");
}

/** Waits until the Benchmark frame is as tall as its page (it reports its height on each change). */
async function settledFrame(top) {
  await top.waitForFunction(() => {
    const frame = document.querySelector("#bench-frame");
    const inner = frame?.contentDocument?.documentElement;
    return inner && Math.abs(frame.getBoundingClientRect().height - inner.getBoundingClientRect().height) < 2;
  }, null, { timeout: 10_000 });
}

/** Ticks only `kernels` (names as in the tab). */
async function choose(page, kernels) {
  for (const box of await page.locator('[id^="bench-k-"]').all()) {
    const name = (await box.getAttribute("id")).slice("bench-k-".length);
    if ((await box.isChecked()) !== kernels.includes(name)) await box.click();
  }
}

async function ready(page) {
  await page.waitForSelector("#bench-start:not([disabled])", { timeout: 60_000 });
}

// Patches of the WebGPU API, installed before the page's scripts.
const FAULTS = {
  noWebgpu: `delete Navigator.prototype.gpu;`,
  smallLimits: `Object.defineProperty(GPUSupportedLimits.prototype, "maxComputeInvocationsPerWorkgroup", { get() { return 64; } });`,
  // From the fourth buffer on, out-of-memory scopes report an error, as if
  // the GPU had no memory left (every one: some scopes are never awaited).
  oom: `(() => {
    const filters = [];
    let buffers = 0, pending = false;
    const push = GPUDevice.prototype.pushErrorScope, pop = GPUDevice.prototype.popErrorScope;
    const create = GPUDevice.prototype.createBuffer;
    GPUDevice.prototype.pushErrorScope = function (f) { filters.push(f); return push.call(this, f); };
    GPUDevice.prototype.popErrorScope = function () {
      const f = filters.pop();
      const result = pop.call(this);
      if (f === "out-of-memory" && pending) return result.then(() => new GPUOutOfMemoryError("simulated: out of memory"));
      return result;
    };
    GPUDevice.prototype.createBuffer = function (d) { if (++buffers === 4) pending = true; return create.call(this, d); };
  })();`,
  // Every shader after the first fails to compile.
  shader: `(() => {
    const create = GPUDevice.prototype.createShaderModule;
    let n = 0;
    GPUDevice.prototype.createShaderModule = function (d) { return create.call(this, ++n > 1 ? { ...d, code: "fn broken( {" } : d); };
  })();`,
  // The device is destroyed shortly after the first dispatch is submitted.
  lost: `(() => {
    const submit = GPUQueue.prototype.submit;
    const request = GPUAdapter.prototype.requestDevice;
    let device = null, armed = false;
    GPUAdapter.prototype.requestDevice = async function (d) { device = await request.call(this, d); armed = false; return device; };
    GPUQueue.prototype.submit = function (b) { const r = submit.call(this, b); if (!armed && device) { armed = true; setTimeout(() => device.destroy(), 50); } return r; };
  })();`,
};

async function faultCase(browser, url, fault, wantKind, { start = true, route } = {}) {
  const { context, page, top, problems } = await openBench(browser, url, { init: fault && FAULTS[fault], route });
  try {
    if (start) {
      await ready(page);
      await choose(page, ["gelu", "layernorm"]);
      await page.check("#bench-quick");
      await page.click("#bench-start");
    }
    const got = await failure(page);
    expect(got.kind === wantKind, `${fault}: expected ${wantKind}, got ${got.kind}: ${got.text}`);
    if (start) await ready(page); // never a frozen page: Start comes back
    await calculatorWorks(top);
    const crashes = problems.filter((p) => p.startsWith("page error"));
    expect(crashes.length === 0, `${fault}: ${crashes.join("; ")}`);
    return got;
  } finally {
    await context.close();
  }
}

/** Runs the quick fp32 suite; returns the numbers for the budgets block. */
async function quickSuite(browser, url) {
  const { context, page, top, problems } = await openBench(browser, url);
  try {
    await ready(page);
    const adapter = await text(page, "#bench-adapter-name");
    expect((await page.getAttribute("#bench-f16", "data-on")) === "false", "SwiftShader reports shader-f16; the no-f16 path is untested");
    expect(await page.isVisible("#bench-no-f16"), "no note that only fp32 runs without shader-f16");
    expect(await page.isDisabled("#bench-f16-on"), "fp16 can be ticked without shader-f16");
    expect((await page.inputValue("#bench-gpu")) === "", "an unknown GPU got a preset (and a peak) without the user choosing");
    // Every kernel, and the ResNet layer (the transformer block takes ~45 s
    // on SwiftShader; the native suite covers it).
    await choose(page, ["matmul", "conv2d", "layernorm", "softmax", "gelu", "attention", "adam", "resnet"]);
    await page.check("#bench-quick");
    const started = Date.now();
    await page.click("#bench-start");
    await page.waitForSelector("#bench-progress", { timeout: 10_000 });
    await page.waitForSelector("#bench-results", { timeout: 240_000 });
    const seconds = (Date.now() - started) / 1000;
    const rows = await page.locator("#bench-kernels tbody tr").count();
    expect(rows >= 10, `only ${rows} kernel rows`);
    expect((await page.locator('#bench-kernels tr[data-dtype="f16"]').count()) === 0, "f16 rows without shader-f16");
    expect((await page.locator("#bench-layers tbody.bench-layer").count()) === 1, "the ResNet layer is missing");
    const speed = await page.locator("#bench-speedup-f32");
    const factor = Number(await speed.getAttribute("data-factor"));
    const gflops = Number(await speed.getAttribute("data-gflops"));
    expect(factor > 0 && gflops > 0, `speed-up ${factor}, GFLOP/s ${gflops}`);
    await page.waitForSelector("#bench-projection", { timeout: 10_000 });
    const step = Number(await page.getAttribute("#bench-projection", "data-seconds"));
    expect(step > 0, `projected step ${step} s`);
    // SwiftShader draws on the CPU: the projection says so.
    expect((await page.locator("#bench-projection-software").count()) === 1, "the projection does not flag the software GPU");
    // Byte differences in the page's units, with their sign.
    const diffs = await page.locator("#bench-layers tr.bench-why td.num[data-bytes]").allTextContents();
    expect(diffs.every((d) => /^[+−][\d.,]+ (B|KiB|MiB|GiB)$/.test(d.trim())), `byte differences: ${diffs.join(" | ")}`);
    // A peak only once the user picks a GPU.
    expect((await page.locator("#bench-kernels td:has-text('%')").count()) === 0, "% of peak shown for an unknown GPU");
    await page.selectOption("#bench-gpu", "rtx-4090");
    expect((await page.locator("#bench-kernels td:has-text('%')").count()) === rows, "% of peak missing after picking a GPU");
    await page.selectOption("#bench-gpu", "");
    // Exports: the JSON download parses and is the bench schema; the Markdown has the table.
    const [download] = await Promise.all([top.waitForEvent("download"), page.click("#bench-export-json")]);
    const report = JSON.parse(await readFile(await download.path(), "utf8"));
    expect(report.schema === "vramfit.bench/1", `exported schema ${report.schema}`);
    expect(report.results.length === rows && report.layers.length === 1 && report.throughput, "the exported JSON lacks rows");
    const [md] = await Promise.all([top.waitForEvent("download"), page.click("#bench-export-md")]);
    expect((await readFile(await md.path(), "utf8")).includes("| matmul tiled | f32 |"), "the Markdown export lacks the matmul row");
    await settledFrame(top);
    await top.screenshot({ path: path.join(outDir, "bench.png"), fullPage: true });
    const layer = report.layers.map((l) => `${l.layer} ${l.saved_bytes} B measured vs ${l.estimate?.estimated_bytes ?? "-"} B estimated`);
    expect(problems.length === 0, problems.join("\n  "));
    return { adapter, factor, gflops, seconds, step, layer, timer: report.results[0]?.timer };
  } finally {
    await context.close();
  }
}

async function cancelRun(browser, url) {
  const { context, page, problems } = await openBench(browser, url);
  try {
    await ready(page);
    await page.click("#bench-start"); // full timing: long enough to cancel
    await page.waitForFunction(() => document.querySelector("#bench-progress-label")?.textContent.trim(), null, { timeout: 30_000 });
    await page.waitForTimeout(500);
    await page.click("#bench-cancel");
    const got = await failure(page, 15_000);
    expect(got.kind === "Cancelled", `cancel showed ${got.kind}: ${got.text}`);
    await ready(page);
    expect((await page.locator("#bench-results").count()) === 0, "a cancelled run shows results");
    expect(problems.length === 0, problems.join("\n  "));
  } finally {
    await context.close();
  }
}

/** Screenshots of the tab with results in dark mode and in Chinese, and the language scan. */
async function looks(browser, url) {
  for (const [name, options] of [["bench-dark", { colorScheme: "dark" }], ["bench-zh", { locale: "zh-CN" }], ["bench-mobile", { viewport: { width: 390, height: 844 } }]]) {
    const { context, page, top, problems } = await openBench(browser, url, options);
    try {
      await ready(page);
      // The Chinese page shows a layer too, for the language scan of its table.
      await choose(page, name === "bench-zh" ? ["gelu", "adam", "resnet"] : ["gelu", "adam"]);
      await page.check("#bench-quick");
      await page.click("#bench-start");
      await page.waitForSelector("#bench-results", { timeout: 120_000 });
      await settledFrame(top);
      await top.screenshot({ path: path.join(outDir, `${name}.png`), fullPage: true });
      if (name === "bench-zh") {
        const left = englishLeft(await pageStrings(page));
        expect(left.phrases.length === 0 && left.words.length === 0, `English left on the Chinese Benchmark tab: ${[...left.phrases, ...left.words].join(", ")}`);
      }
      expect(problems.length === 0, problems.join("\n  "));
    } finally {
      await context.close();
    }
  }
}

/** The checks; `numbers` receives what the quick suite measured. */
export function benchChecks(numbers) {
  return [
    ["Benchmark tab: without a GPU adapter (--disable-gpu) it says so, follows the calculator's language and theme; the calculator keeps working", async ({ browser, url }) => {
      const { context, page, top, problems } = await openBench(browser, url);
      try {
        const got = await failure(page);
        expect(got.kind === "NoAdapter" && got.text.includes("vramfit bench"), `no adapter showed ${got.kind}: ${got.text}`);
        // The frame follows the calculator's language and theme (sent with the configuration on every change).
        await top.selectOption("#lang", "zh-CN");
        await page.waitForFunction(() => document.documentElement.lang === "zh-CN" && /[\u4e00-\u9fff]/.test(document.querySelector("#bench-error")?.textContent ?? ""), null, { timeout: 10_000 });
        const theme = await top.getAttribute("html", "data-theme");
        await top.click("#theme");
        await page.waitForFunction((t) => document.documentElement.dataset.theme !== t, theme, { timeout: 10_000 });
        await top.selectOption("#lang", "en");
        await page.waitForFunction(() => document.documentElement.lang === "en", null, { timeout: 10_000 });
        // The bridge takes messages only from the other window of its pair:
        // another same-origin frame asking the page for Chinese, or telling
        // the calculator a height, is ignored; so is the calculator itself
        // with another schema version.
        const rogue = await (await top.evaluateHandle(() => {
          const frame = document.createElement("iframe");
          frame.id = "rogue";
          document.body.append(frame);
          return frame;
        })).contentFrame();
        await rogue.evaluate(() => {
          const origin = parent.location.origin;
          parent.postMessage({ type: "vramfit:resize", v: 1, height: 5 }, origin);
          parent.document.querySelector("#bench-frame").contentWindow.postMessage({ type: "vramfit:bench-config", v: 1, query: "m=gpt2&lang=zh-CN" }, origin);
        });
        await top.evaluate(() => document.querySelector("#bench-frame").contentWindow.postMessage({ type: "vramfit:bench-config", v: 2, query: "m=gpt2&lang=zh-CN" }, location.origin));
        await top.waitForTimeout(500);
        expect((await page.evaluate(() => document.documentElement.lang)) === "en", "the Benchmark page took a configuration from a window other than the calculator");
        const height = await top.evaluate(() => document.querySelector("#bench-frame").getBoundingClientRect().height);
        expect(height > 100, `a rogue resize message set the Benchmark frame to ${height}px`);
        await calculatorWorks(top);
        expect(problems.length === 0, problems.join("\n  "));
      } finally {
        await context.close();
      }
    }],
    ["Benchmark tab: the quick fp32 suite on SwiftShader WebGPU shows results, the no-f16 note, exports JSON and Markdown", async ({ gpuBrowser, url }) => {
      Object.assign(numbers, await quickSuite(gpuBrowser, url));
    }],
    ["Benchmark tab: Cancel during a run stops it with a message and Start comes back", ({ gpuBrowser, url }) => cancelRun(gpuBrowser, url)],
    ["Benchmark tab: no WebGPU at all: a message, the module is not downloaded, the calculator works", async ({ gpuBrowser, url }) => {
      const { context, page, top, requests } = await openBench(gpuBrowser, url, { init: FAULTS.noWebgpu });
      try {
        const got = await failure(page);
        expect(got.kind === "NoWebgpu" && /WebGPU/.test(got.text), `showed ${got.kind}: ${got.text}`);
        expect(!requests.some((r) => r.includes("/bench/")), "the benchmark module was downloaded without WebGPU");
        await calculatorWorks(top);
      } finally {
        await context.close();
      }
    }],
    ["Benchmark tab: the module failing to load shows a message", ({ gpuBrowser, url }) =>
      faultCase(gpuBrowser, url, null, "LoadFailed", { start: false, route: "**/bench/*.wasm" })],
    ["Benchmark tab: limits too small, out of memory, a shader that does not compile, a lost device: a message each, never a frozen page", async ({ gpuBrowser, url }) => {
      await faultCase(gpuBrowser, url, "smallLimits", "Limits", { start: false });
      await faultCase(gpuBrowser, url, "oom", "OutOfMemory");
      await faultCase(gpuBrowser, url, "shader", "Shader");
      await faultCase(gpuBrowser, url, "lost", "DeviceLost");
    }],
    ["Benchmark tab: dark, mobile and 简体中文 screenshots; no English left in Chinese", ({ gpuBrowser, url }) => looks(gpuBrowser, url)],
  ];
}

/** Launches the WebGPU browser. */
export function launchWebgpu(executablePath, args) {
  return chromium.launch({ executablePath, args: [...args.filter((a) => a !== "--disable-gpu"), ...WEBGPU_ARGS] });
}

/** The lines of the budgets block for the benchmark. */
export function printBenchNumbers(n) {
  if (!n.factor) return;
  console.log(`\nbenchmark in Chromium (${n.adapter}, quick fp32 suite, small sizes, ${n.timer}; reported, not asserted):`);
  console.log(`  matmul tiled vs naive: ${n.factor.toFixed(2)}×; tiled matmul ${n.gflops.toFixed(1)} GFLOP/s`);
  console.log(`  layers: ${n.layer.join("; ")}`);
  console.log(`  projected step of the first screen's configuration: ${n.step.toFixed(2)} s; suite took ${n.seconds.toFixed(0)} s`);
}
