// Shared by run.mjs and checks.mjs: the failure type, assertions, reading
// values off the page, and where screenshots go.

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
  page.on("requestfailed", (req) => problems.push(`request failed: ${req.url()} (${req.failure()?.errorText})`));
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
    if (res.url().endsWith(".wasm") && res.headers()["content-type"] !== "application/wasm") {
      problems.push(`${res.url()} served as ${res.headers()["content-type"]}, not application/wasm`);
    }
  });
  return problems;
}

export const bytesOf = async (page, selector) => Number(await page.getAttribute(selector, "data-bytes"));

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

export async function text(page, selector) {
  return ((await page.textContent(selector)) ?? "").trim();
}

// A real Hugging Face config (meta-llama/Llama-2-7b-hf), as downloaded.
