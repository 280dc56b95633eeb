// The embeddable widget: the demo docs page (three widgets, same site) and
// a host page on another origin (frames cross-origin, resize messages
// checked, XSS probes in data attributes). Each check gets
// { browser, url, dist, repo } and opens its own context.

import path from "node:path";
import { expect, outDir, serve, text } from "./helpers.mjs";
import { loaded, openPage } from "./links.mjs";

/** The frame inside the element matching `selector`, once its estimate is shown. */
async function widget(page, selector) {
  const el = await page.waitForSelector(`${selector} iframe`, { timeout: 10_000 });
  await el.scrollIntoViewIfNeeded();
  const frame = await el.contentFrame();
  await loaded(frame);
  return { el, frame };
}

/** Waits until the iframe is as tall as its content (±1 px); returns that height. */
async function fitted(page, el, frame, previous = -1) {
  let last = "";
  for (let i = 0; i < 100; i += 1) {
    const content = await frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
    const height = await el.evaluate((f) => f.clientHeight);
    last = `frame ${height}px, content ${content}px`;
    if (Math.abs(height - content) <= 1 && height !== previous && height > 120) return height;
    await page.waitForTimeout(100);
  }
  throw new Error(`the frame did not fit its content (${last}, before ${previous}px)`);
}

const hostPage = (widgets) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A docs site</title><link rel="icon" href="data:,">
<style>body { font-family: Georgia, serif } * { color: rgb(200, 0, 0) }</style></head>
<body>
<h1>Docs on another origin</h1>
<div id="w1" data-vramfit="v=1&amp;m=gpt2&amp;b=4&amp;g=rtx-3060-12gb" data-title="GPT-2 example"></div>
<div id="w2" data-vramfit='"><img src=x onerror="window.__xss=1">' data-theme="<script>window.__xss=1</script>"
     data-lock="<img src=x onerror=window.__xss=1>" data-title='"><img src=x onerror="window.__xss=1">'></div>
<div id="w3" data-vramfit="javascript:window.__xss=1" data-lang='"><svg onload="window.__xss=1">' data-curve="javascript:alert(1)"></div>
<iframe id="rogue" title="not from embed.js" src="${widgets}embed.html?m=resnet18" height="200"></iframe>
<script src="${widgets}embed.js" async></script>
</body></html>`;

export const embedChecks = [
  ["the demo docs page embeds three widgets that render, fit their content, keep their locks and theme", async ({ browser, url }) => {
    const { context, page, problems } = await openPage(browser, { viewport: { width: 1100, height: 900 } });
    await page.goto(`${url}demo.html`);
    const cnn = await widget(page, "#example-cnn");
    const bert = await widget(page, "#example-bert");
    const llama = await widget(page, "#example-llama");
    const heights = [];
    for (const [name, w, locked] of [["cnn", cnn, ["m"]], ["bert", bert, ["m", "g"]], ["llama", llama, ["m", "g", "b", "s", "a", "p", "o", "c", "at"]]]) {
      heights.push(await fitted(page, w.el, w.frame));
      const keys = await w.frame.$$eval(".locked-field", (els) => els.map((e) => e.dataset.key));
      expect(JSON.stringify(keys) === JSON.stringify(locked), `${name}: locked ${keys}, expected ${locked}`);
      expect(["true", "false"].includes(await w.frame.getAttribute("#verdict", "data-fits")), `${name}: no verdict`);
      expect((await w.frame.locator(".stack-seg").count()) >= 3, `${name}: no breakdown bar`);
      const href = await w.frame.getAttribute("#open-full", "href");
      expect(href.startsWith("index.html?v=2&"), `${name}: open link ${href}`);
    }
    expect(new Set(heights).size === 3, `three different heights expected: ${heights}`);
    expect((await cnn.frame.locator("#batch-chart").count()) === 1 && (await bert.frame.locator("#batch-chart").count()) === 0, "curve=1 only on the CNN");
    expect((await llama.frame.locator("input, select").count()) === 0, "lock=all left inputs editable");
    expect((await llama.frame.getAttribute("html", "data-theme")) === "dark", "data-theme=dark was not applied");
    const extras = await text(llama.frame, "#extras");
    expect(extras.includes("strategy zero3") && extras.includes("GPUs per node 8") && !extras.includes("--"), `the ZeRO setting is not shown in words: ${extras}`);
    await page.screenshot({ path: path.join(outDir, "demo.png"), fullPage: true });
    await context.close();
    expect(problems.length === 0, problems.join("\n  "));
  }],

  ["editing a widget resizes its frame and leaves the other widgets and the host page alone", async ({ browser, url }) => {
    const { context, page, problems } = await openPage(browser, { viewport: { width: 1100, height: 900 } });
    await page.goto(`${url}demo.html`);
    const cnn = await widget(page, "#example-cnn");
    const bert = await widget(page, "#example-bert");
    const before = await fitted(page, cnn.el, cnn.frame);
    const bertSummary = await text(bert.frame, "#summary");
    await cnn.frame.fill("#batch", "abc");
    await cnn.frame.waitForSelector("#batch-error", { timeout: 5_000 });
    const after = await fitted(page, cnn.el, cnn.frame, before);
    expect(after > before, `an error message made the widget ${after}px, not taller than ${before}px`);
    await cnn.frame.fill("#batch", "200");
    await cnn.frame.waitForSelector('#verdict[data-fits="false"]', { timeout: 10_000 });
    expect((await text(bert.frame, "#summary")) === bertSummary, "editing one widget changed another");
    // The host's styles stay out of the frames, and the frames put nothing in the host.
    const font = await cnn.frame.evaluate(() => getComputedStyle(document.body).fontFamily);
    expect(!font.includes("Georgia"), `the host's font reached the widget: ${font}`);
    const hostChildren = await page.$$eval(".example", (els) => els.map((e) => [...e.children].map((c) => c.tagName).join()));
    expect(hostChildren.every((c) => c === "IFRAME"), `host elements: ${hostChildren}`);
    await context.close();
    expect(problems.length === 0, problems.join("\n  "));
  }],

  ["'Open in vramfit' opens the full page with the widget's state and the same numbers", async ({ browser, url }) => {
    const { context, page, problems } = await openPage(browser, { viewport: { width: 1100, height: 900 } });
    await page.goto(`${url}demo.html`);
    const cnn = await widget(page, "#example-cnn");
    await cnn.frame.fill("#batch", "96");
    await cnn.frame.selectOption("#checkpointing", "full");
    await cnn.frame.waitForFunction(() => document.querySelector("#summary")?.textContent.includes("batch 96"), null, { timeout: 5_000 });
    const bytes = await cnn.frame.getAttribute("#peak-allocated", "data-bytes");
    const [full] = await Promise.all([context.waitForEvent("page"), cnn.frame.click("#open-full")]);
    await loaded(full);
    const got = {
      model: await full.inputValue("#model"),
      gpu: await full.inputValue("#gpu"),
      batch: await full.inputValue("#batch"),
      checkpointing: await full.inputValue("#checkpointing"),
      precision: await full.inputValue("#precision"),
      optimizer: await full.inputValue("#optimizer"),
      bytes: await full.getAttribute("#peak-allocated", "data-bytes"),
    };
    const want = { model: "resnet50", gpu: "rtx-3060-12gb", batch: "96", checkpointing: "full", precision: "fp32", optimizer: "sgd-momentum", bytes };
    expect(JSON.stringify(got) === JSON.stringify(want), `full page ${JSON.stringify(got)}, widget ${JSON.stringify(want)}`);
    await context.close();
    expect(problems.length === 0, problems.join("\n  "));
  }],

  ["a widget loads its own module only, never the calculator's", async ({ browser, url }) => {
    const { context, page, problems } = await openPage(browser);
    const fetched = [];
    page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
    await page.goto(`${url}embed.html?v=2&m=gpt2&b=4`);
    await loaded(page);
    await page.waitForLoadState("networkidle");
    const calculator = fetched.filter((p) => /vramfit_web(_bg\.wasm|\.js)$/.test(p));
    expect(calculator.length === 0, `the widget fetched the calculator's files: ${calculator}`);
    const own = fetched.filter((p) => p.endsWith("/vramfit_widget_bg.wasm"));
    expect(own.length === 1, `the widget's wasm was fetched ${own.length} times: ${fetched.join(" ")}`);
    await context.close();
    expect(problems.length === 0, problems.join("\n  "));
  }],

  ["a widget of an engine's link shows the engine's answer, as the page does", async ({ browser, url }) => {
    const { context, page, problems } = await openPage(browser, { viewport: { width: 520, height: 900 } });
    await page.goto(`${url}embed.html?v=1&m=llama-3-8b&mo=inference&ctx=8192&en=vllm&g=rtx-4090`);
    await page.waitForSelector('#results[data-engine="vllm"] #serve-verdict', { timeout: 30_000 });
    expect((await page.getAttribute("#serve-verdict", "data-fits")) === "true", "vLLM does not fit Llama-3-8B on a 4090");
    expect(Number(await page.getAttribute("#max-concurrency", "data-value")) > 6, "vLLM's pool holds no 6 sequences");
    // The widget stays short: no limits card, no launch command; its link opens the page with the engine.
    expect((await page.$("#serve-answers")) === null && (await page.$("#launch-command")) === null, "the widget shows the page's extras");
    // Its form asks what vLLM reads: no optimizer, checkpointing, precision or attention.
    const unread = [];
    for (const id of ["#optimizer", "#checkpointing", "#precision", "#attention", "#batch"]) if ((await page.$(id)) !== null) unread.push(id);
    expect(unread.length === 0 && (await page.$("#model")) !== null, `the widget asks for ${unread.join(" ")}`);
    const href = await page.getAttribute("#open-full", "href");
    expect(new URLSearchParams(href.split("?")[1]).get("en") === "vllm", `open-full: ${href}`);
    await context.close();
    expect(problems.length === 0, problems.join("\n  "));
  }],

  ["on another origin: frames are isolated, embed.js takes resize messages only from its own frames, probes in attributes stay inert", async ({ browser, url, dist }) => {
    // The docs site is served from "localhost", the widgets from "127.0.0.1": two origins.
    const host = await serve(dist, { host: "localhost", extra: { "/host.html": hostPage(url) } });
    try {
      const { context, page, problems, dialogs } = await openPage(browser, { viewport: { width: 1000, height: 900 } });
      await page.goto(`${host.url}host.html`);
      const frames = [];
      for (const id of ["#w1", "#w2", "#w3"]) {
        const w = await widget(page, id);
        const src = await w.el.getAttribute("src");
        expect(src.startsWith(`${url}embed.html?`), `${id}: frame src ${src}`);
        frames.push({ id, ...w, height: await fitted(page, w.el, w.frame) });
      }
      // Cross-origin: the host cannot reach into a frame.
      expect((await page.$$eval("iframe.vramfit-frame", (fs) => fs.map((f) => f.contentDocument))).every((d) => d === null), "a frame's document is reachable");
      // Probes: shown as text in the widgets' warnings, never run, nothing added to the host.
      const xss = async (p) => p.evaluate(() => window.__xss);
      expect((await xss(page)) === undefined && (await page.locator("img, svg").count()) === 0, "a probe ran or rendered in the host");
      for (const { id, frame } of frames) {
        expect((await xss(frame)) === undefined && (await frame.locator("img[src='x'], [onerror], [onload]").count()) === 0, `${id}: a probe ran`);
      }
      const w2 = await frames[1].frame.$$eval("#link-warnings li", (lis) => lis.map((li) => li.dataset.key).join());
      expect(w2 === "lock,theme", `w2 warnings: ${w2}`);
      expect((await text(frames[1].frame, "#link-warnings")).includes("theme=<script>window.__xss=1</script>"), "the theme probe is not shown as text");
      const title = await frames[1].el.getAttribute("title");
      expect(title === '"><img src=x onerror="window.__xss=1">', `w2 title: ${title}`);
      const w3 = await frames[2].frame.$$eval("#link-warnings li", (lis) => lis.map((li) => li.dataset.key).join());
      expect(w3 === "curve,lang", `w3 warnings: ${w3}`);
      // Spoofed resize messages: from the host itself, from a vramfit frame
      // embed.js did not make, and malformed ones from a real frame.
      const rogue = await (await page.$("#rogue")).contentFrame();
      await loaded(rogue);
      await page.evaluate(() => window.postMessage({ type: "vramfit:resize", v: 1, height: 3999 }, "*"));
      await rogue.evaluate(() => parent.postMessage({ type: "vramfit:resize", v: 1, height: 3999 }, "*"));
      for (const msg of [{ type: "vramfit:resize", v: 2, height: 3999 }, { type: "other", v: 1, height: 3999 }, { type: "vramfit:resize", v: 1, height: "<b>" }, "3999"]) {
        await frames[0].frame.evaluate((m) => parent.postMessage(m, "*"), msg);
      }
      await page.waitForTimeout(300);
      const now = await page.$$eval("iframe.vramfit-frame", (fs) => fs.map((f) => f.clientHeight));
      expect(now.every((h, i) => h === frames[i].height), `spoofed messages resized frames: ${now}, were ${frames.map((f) => f.height)}`);
      // A well-formed message from the frame itself is obeyed (the positive control).
      await frames[0].frame.evaluate(() => parent.postMessage({ type: "vramfit:resize", v: 1, height: 777 }, "*"));
      await page.waitForFunction(() => document.querySelector("#w1 iframe").clientHeight === 777, null, { timeout: 5_000 });
      await page.screenshot({ path: path.join(outDir, "host-page.png"), fullPage: true });
      expect(dialogs.length === 0, `dialogs: ${dialogs}`);
      await context.close();
      expect(problems.length === 0, problems.join("\n  "));
    } finally {
      host.server.close();
    }
  }],
];
