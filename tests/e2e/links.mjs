// Share links, the Content-Security-Policy, XSS probes and publishing. Each
// check gets { browser, url, dist, repo } and opens its own context.

import { execFileSync } from "node:child_process";
import path from "node:path";
import { bytesOf, expect, outDir, serve, settledSearch, text, watch } from "./helpers.mjs";

/** The share keys (core and page), each of which an XSS probe goes into. */
const KEYS = [
  "v", "m", "j", "g", "b", "s", "i", "a", "p", "o", "c", "at", "mo", "r", "w", "ctx", "fr", "ka", "km", "kc", "lf", "st", "gn",
  "n", "of", "tp", "pp", "vpp", "sp", "bv", "zb", "lang", "theme", "units", "lock", "curve",
];

export const PROBES = [
  "<script>window.__xss=1</script>",
  '"><img src=x onerror="window.__xss=1">',
  "javascript:window.__xss=1",
];

/** Opens a page that records dialogs and CSP violations; `csp: false` bypasses the policy. */
export async function openPage(browser, { csp = true, ...options } = {}) {
  const context = await browser.newContext({ locale: "en-US", colorScheme: "light", bypassCSP: !csp, ...options });
  await context.addInitScript(() => {
    window.__violations = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const page = await context.newPage();
  const problems = watch(page);
  const dialogs = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  return { context, page, problems, dialogs };
}

/** Waits for the first estimate (the widget keeps #peak-allocated hidden, for tests). */
export async function loaded(page) {
  await page.waitForSelector("#peak-allocated[data-bytes]", { state: "attached", timeout: 30_000 });
}

/** Runs `vramfit estimate --from-url LINK --json` (the CLI built by run.sh). */
function cli(repo, link) {
  const bin = process.env.VRAMFIT_BIN ?? path.join(repo, "target", "debug", "vramfit");
  return JSON.parse(execFileSync(bin, ["estimate", "--from-url", link, "--json"], { encoding: "utf8" }));
}

/** What the page shows: the three peaks, the fit and the largest batch. */
async function shown(page) {
  return {
    allocated: await bytesOf(page, "#peak-allocated"),
    reserved: await bytesOf(page, "#peak-reserved"),
    device: await bytesOf(page, "#device-used"),
    fits: (await page.getAttribute("#verdict", "data-fits")) === "true",
    maxBatch: Number(await page.getAttribute("#max-batch", "data-value")),
  };
}

const LINKS = [
  "?v=2&m=resnet50&g=a100-80gb&b=64&i=256&a=4&p=fp32&o=sgd-momentum&c=every-3",
  "?v=2&m=bert-large&g=rtx-3060-12gb&b=4&s=384&p=amp-fp16&o=adamw-8bit&c=every-2&at=eager",
  "?v=2&m=llama-2-7b&g=a100-40gb&b=2&s=2048&p=bf16&c=full&at=flash&st=zero3&gn=8&of=optimizer",
  // Version 2's LoRA with version 1's fp32 base (lb), which the form does not show.
  "?v=2&m=llama-2-7b&b=1&s=1024&mo=finetune-lora&lb=fp32",
  // The 2022 Trainer's gradients kept as zeros with its per-parameter AdamW, and a hand-written loop
  // that keeps the model's outputs through backward (BERT's masked-LM logits): settings the form does
  // not show; the page completes (its comparison offers ZeRO as DeepSpeed runs it).
  "?v=2&m=bert-base-mlm&g=l40s&b=16&p=fp32&o=adam&oi=loop&zg=zeros&lo=kept",
  // Hugging Face's 2022 V100 run under PyTorch 1.10, whose softmax keeps its input (pt), with AMP:
  // settings the form does not show.
  "?v=2&m=bert-large&g=v100-16gb&b=4&p=amp-fp16&oi=loop&zg=zeros&pt=1.10&at=eager",
  // milabench's torchvision loop, which runs backward inside its autocast region (ar).
  "?v=2&m=convnext_large&g=h100-sxm&b=64&p=amp-fp16&o=sgd&ar=backward",
  // A packed config.json (meta-llama/Llama-2-7b-hf as `vramfit estimate --model config.json --url` writes it).
  "?v=2&g=h200&b=1&s=1024&j=1ewkiY29tbXVuaXR5L2xsYW1hLTItN2ItaGYiLAI0MDk2LAMxMTAwOCwBGywEMzIsBTMyLAczMjAwMH0",
];

export const linkChecks = [
  ["a link loads into the form and the page shows what `vramfit estimate --from-url` prints", async ({ browser, url, repo }) => {
    const { context, page, problems } = await openPage(browser);
    for (const link of LINKS) {
      await page.goto(url + link);
      await loaded(page);
      await page.waitForSelector('#results[data-complete="true"]', { timeout: 20_000 });
      const search = await settledSearch(page, link);
      expect(search === link, `the page rewrote ${link} as ${search}`);
      const page_ = await shown(page);
      const e = cli(repo, url + link);
      const want = {
        allocated: e.peak_allocated_bytes,
        reserved: e.peak_reserved_bytes,
        device: e.device_used_bytes,
        fits: e.gpu.fits,
        maxBatch: e.gpu.max_batch,
      };
      expect(JSON.stringify(page_) === JSON.stringify(want), `${link}: page ${JSON.stringify(page_)}, CLI ${JSON.stringify(want)}`);
    }
    expect((await page.inputValue("#model")) === "hf-import", "the packed config.json was not selected");
    expect((await text(page, "#summary")).startsWith("community/llama-2-7b-hf"), `summary: ${await text(page, "#summary")}`);
    await page.goto(url + LINKS[2]);
    await loaded(page);
    const layout = [await page.inputValue("#strategy"), await page.inputValue("#gpus"), await page.inputValue("#offload")];
    expect(JSON.stringify(layout) === JSON.stringify(["zero3", "8", "optimizer"]), `the form shows ${layout}, not ZeRO-3 over 8 GPUs with optimizer offload`);
    await context.close();
    expect(problems.length === 0, problems.join("\n  "));
  }],

  ["the prerendered default page paints first only where the app starts with it: never under a link's settings or in Chinese", async ({ browser, url }) => {
    // What the first frame shows, recorded before it paints (an animation frame's callbacks run before its paint).
    // `typed`: a batch typed into the prerendered page in that frame, before the app starts.
    // `crashed`: this tab's last hydration never finished (the flag the app sets before it hydrates).
    const firstFrame = async (address, options = {}, typed = null, crashed = false) => {
      const { context, page, problems } = await openPage(browser, options);
      if (crashed) await page.addInitScript(() => sessionStorage.setItem("vramfit:hydrating", "1"));
      await page.addInitScript((typed) => {
        // The parser may yield to a frame before it reaches the verdict (a busy machine): such a frame
        // shows no result at all, so the first one that could is the one recorded.
        const record = () => {
          // Without a prerendered page to show, the app may have mounted (and replaced both) already.
          const pre = document.getElementById("prerendered");
          if (document.readyState === "loading" && !pre?.querySelector("#verdict .verdict-detail")) {
            requestAnimationFrame(record);
            return;
          }
          const shell = document.querySelector(".boot-shell");
          window.__firstFrame = {
            prerendered: pre ? getComputedStyle(pre).display !== "none" : false,
            verdict: pre?.querySelector("#verdict .verdict-detail")?.textContent ?? "",
            shell: shell ? getComputedStyle(shell).display !== "none" : false,
          };
        };
        requestAnimationFrame(record);
        // Once the page is parsed, before the app starts (boot.js waits for the first paint and the
        // compiled module): keep its elements, to see whether the app adopts them or builds new
        // ones, and type the batch.
        document.addEventListener("DOMContentLoaded", () => {
          const pre = document.getElementById("prerendered");
          window.__preNodes = ["verdict", "batch", "summary"].map((id) => pre?.querySelector("#" + id) ?? null);
          window.__preVerdict = pre?.querySelector("#verdict .verdict-detail")?.textContent ?? "";
          window.__preModels = pre?.querySelector("#model")?.options.length ?? null;
          const batch = pre?.querySelector("#batch");
          if (typed !== null && batch) {
            batch.focus();
            batch.value = typed;
            batch.setSelectionRange(typed.length, typed.length);
            batch.dispatchEvent(new Event("input", { bubbles: true }));
          }
        });
      }, typed);
      await page.goto(address);
      await loaded(page);
      // The prerendered page has the same elements: wait for the app itself (boot.js marks it started).
      await page.waitForFunction(() => !document.getElementById("app").hasAttribute("aria-busy"), null, { timeout: 30_000 });
      const first = await page.evaluate(() => window.__firstFrame);
      const now = await page.evaluate(() => document.querySelector("#verdict .verdict-detail")?.textContent ?? "");
      const adopted = await page.evaluate(() =>
        window.__preNodes.every((node, i) => node !== null && node === document.getElementById(["verdict", "batch", "summary"][i])));
      const summary = await page.evaluate(() => document.getElementById("summary")?.textContent ?? "");
      const parsed = await page.evaluate(() => window.__preVerdict);
      const flag = await page.evaluate(() => sessionStorage.getItem("vramfit:hydrating"));
      const batch = await page.evaluate(() => document.getElementById("batch")?.value ?? "");
      // Where the field had the focus: the app's field has it, with the caret, and takes the next key.
      let focus = null;
      if (typed !== null) {
        focus = await page.evaluate(() => ({ id: document.activeElement?.id ?? "", caret: document.activeElement?.selectionStart ?? null }));
        await page.keyboard.type("2");
        focus.after = await page.evaluate(() => document.getElementById("batch")?.value ?? "");
      }
      // The selects list every option once the report is complete (the cards below the verdict are in).
      await page.waitForFunction(() => document.getElementById("results")?.dataset.complete === "true", null, { timeout: 30_000 });
      const models = await page.evaluate(() => {
        const select = document.getElementById("model");
        return { pre: window.__preModels, live: select.options.length, value: select.value, chosen: select.selectedOptions[0]?.value };
      });
      await context.close();
      expect(problems.length === 0, problems.join("\n  "));
      return { first, now, adopted, summary, batch, parsed, flag, models, focus };
    };
    const bare = await firstFrame(url);
    expect(bare.first.prerendered && !bare.first.shell, `the bare address did not paint the prerendered page first: ${JSON.stringify(bare.first)}`);
    // The prerendered verdict is the app's own: the same words once it has mounted.
    expect(bare.first.verdict !== "" && bare.first.verdict === bare.now, `prerendered "${bare.first.verdict}", app "${bare.now}"`);
    // The app hydrates the prerendered page: its elements stay, none is built again.
    expect(bare.adopted, "the app replaced the prerendered elements instead of hydrating them");
    expect(bare.flag === null, `a finished hydration left its flag: ${bare.flag}`);
    // The prerendered selects hold only the chosen option (a third fewer elements to hydrate); the
    // full lists follow once the page is live, with the choice kept.
    expect(bare.models.pre === 1 && bare.models.live > 20 && bare.models.value === "gpt2" && bare.models.chosen === "gpt2",
      `model list: ${JSON.stringify(bare.models)}`);
    // After a hydration that never finished (the crash notice offers Reload), the next start builds
    // the page instead, with the same verdict, and hydrates again from then on.
    const after = await firstFrame(url, {}, null, true);
    expect(!after.adopted && after.now === bare.now && after.flag === null,
      `after an unfinished hydration: adopted ${after.adopted}, verdict "${after.now}", flag ${after.flag}`);
    // A batch typed before the app started is where the app starts: it replaces the page typed into
    // (whose numbers are no longer the app's) rather than adopt it and render again, and the field
    // keeps the focus and the caret, so the next key lands after what was typed.
    const typed = await firstFrame(url, {}, "3");
    expect(!typed.adopted && typed.batch === "3" && /\bbatch 3\b/.test(typed.summary) && typed.parsed !== "" && typed.now !== typed.parsed,
      `a batch typed before the app started was lost: adopted ${typed.adopted}, field "${typed.batch}", summary "${typed.summary}", verdict "${typed.parsed}" → "${typed.now}"`);
    expect(typed.focus?.id === "batch" && typed.focus.caret === 1 && typed.focus.after === "32",
      `the field typed into lost the focus or the caret when the app started: ${JSON.stringify(typed.focus)}`);
    for (const [address, options, what] of [
      [url + LINKS[0], {}, "a share link"],
      [url, { locale: "zh-CN" }, "a Chinese browser"],
      [url + "#benchmark", {}, "the Benchmark tab"],
    ]) {
      const { first } = await firstFrame(address, options);
      expect(!first.prerendered, `${what} painted the prerendered default page first: ${JSON.stringify(first)}`);
    }
  }],

  ["a number typed before the app has arrived is answered by the first-edit module in the app's own words, in the page's own nodes, and the app then takes over", async ({ browser, url }) => {
    // The app's WebAssembly is held back until released, as a slow network would: only boot.js's
    // first-edit module (vramfit_first_edit_bg.wasm) can answer meanwhile.
    const answer = async (typed, untyped = null) => {
      const { context, page, problems } = await openPage(browser);
      let release;
      const held = new Promise((resolve) => { release = resolve; });
      let appRequested = false;
      await page.route("**/vramfit_web_bg.wasm", async (route) => {
        appRequested = true;
        await held;
        await route.continue();
      });
      // The page's verdict, marked for Element Timing as it is parsed (as a page-speed tool marks it).
      await page.addInitScript(() => new MutationObserver((_, observer) => {
        const verdict = document.querySelector("#prerendered #verdict .verdict-detail");
        if (!verdict) return;
        verdict.setAttribute("elementtiming", "page-verdict");
        window.__pageVerdict = verdict;
        observer.disconnect();
      }).observe(document, { childList: true, subtree: true }));
      await page.goto(url);
      const original = await page.evaluate(() => document.querySelector("#prerendered #verdict .verdict-detail")?.textContent ?? "");
      await page.fill("#prerendered #batch", typed);
      await page.waitForFunction((typed) => new RegExp(`\\bbatch ${typed}\\b`).test(document.querySelector("#prerendered #summary")?.textContent ?? ""),
        typed, { timeout: 30_000 });
      // The answer went into the page's own nodes: the verdict's node stays, and its paint is reported.
      const kept = await page.evaluate(() => document.querySelector("#prerendered #verdict .verdict-detail") === window.__pageVerdict);
      // Element Timing entries reach only an observer (buffered), not getEntriesByType.
      const timed = await page.evaluate(() => new Promise((resolve) => {
        new PerformanceObserver((list) => {
          if (list.getEntries().some((e) => e.identifier === "page-verdict")) resolve(true);
        }).observe({ type: "element", buffered: true });
        setTimeout(() => resolve(false), 10_000);
      }));
      if (untyped !== null) {
        await page.fill("#prerendered #batch", untyped);
        await page.waitForFunction((untyped) => new RegExp(`\\bbatch ${untyped}\\b`).test(document.querySelector("#prerendered #summary")?.textContent ?? ""),
          untyped, { timeout: 30_000 });
      }
      const read = () => page.evaluate(() => ({
        summary: document.getElementById("summary")?.textContent ?? "",
        verdict: document.getElementById("verdict")?.textContent ?? "",
        bar: document.getElementById("verdict-bar")?.textContent ?? "",
        maxBatch: document.getElementById("verdict")?.dataset.maxBatch,
        pending: document.getElementById("results")?.classList.contains("pending") ?? false,
        started: !document.getElementById("app").hasAttribute("aria-busy"),
      }));
      const before = await read();
      release();
      await page.waitForFunction(() => !document.getElementById("app").hasAttribute("aria-busy"), null, { timeout: 30_000 });
      await page.waitForFunction(() => document.getElementById("results")?.dataset.complete === "true", null, { timeout: 30_000 });
      const after = await read();
      const adopted = await page.evaluate(() => document.getElementById("prerendered") === null && document.querySelector("[data-edited]") !== null);
      await context.close();
      expect(problems.length === 0, problems.join("\n  "));
      return { original, before, after, appRequested, adopted, kept, timed };
    };
    const typed = await answer("3");
    // Answered before the app had started, with the cards below marked as updating.
    expect(!typed.before.started && typed.before.pending, `the first edit was not answered before the app: ${JSON.stringify(typed.before)}`);
    expect(!typed.before.verdict.includes(typed.original) && typed.before.bar !== "",
      `the first edit's verdict and bar: ${JSON.stringify(typed.before)} (page: "${typed.original}")`);
    expect(typed.kept && typed.timed, `the page's verdict node kept: ${typed.kept}; its Element Timing entry reported: ${typed.timed}`);
    // The app, once started, says exactly what the first-edit module said, and nothing waits any more.
    for (const part of ["summary", "verdict", "bar", "maxBatch"]) {
      expect(typed.after[part] === typed.before[part], `${part}: first edit "${typed.before[part]}", app "${typed.after[part]}"`);
    }
    expect(!typed.after.pending && !typed.adopted, `after the app started: ${JSON.stringify(typed.after)}, adopted ${typed.adopted}`);
    // Typed back to the default before the app starts: the first-edit module shows the page's own
    // answer again, and the app replaces that page (it is not the app's render) with the same words.
    const back = await answer("3", "8");
    expect(back.before.verdict.includes(back.original) && back.after.verdict === back.before.verdict && !back.adopted,
      `typed back to the default: ${JSON.stringify(back)}`);
  }],

  ["a batch cleared in the prerendered page before the app starts keeps the default answer, stale, beside the field's error", async ({ browser, url }) => {
    const { context, page, problems } = await openPage(browser);
    await page.addInitScript(() => document.addEventListener("DOMContentLoaded", () => {
      const batch = document.querySelector("#prerendered #batch");
      if (!batch) return;
      batch.focus();
      batch.value = "";
      batch.dispatchEvent(new Event("input", { bubbles: true }));
    }));
    await page.goto(url);
    await page.waitForFunction(() => !document.getElementById("app").hasAttribute("aria-busy"), null, { timeout: 30_000 });
    const seen = await page.evaluate(() => ({
      batch: document.getElementById("batch")?.value,
      invalid: document.getElementById("batch")?.getAttribute("aria-invalid"),
      focused: document.activeElement?.id,
      verdict: document.querySelector("#verdict .verdict-detail")?.textContent ?? "",
      state: document.getElementById("results")?.dataset.state,
    }));
    await context.close();
    expect(problems.length === 0, problems.join("\n  "));
    expect(seen.batch === "" && seen.invalid === "true" && seen.focused === "batch" && seen.verdict !== "" && seen.state === "stale",
      `after a cleared batch: ${JSON.stringify(seen)}`);
  }],

  ["a link whose configuration is refused still offers every option to change it with", async ({ browser, url }) => {
    // Tensor parallelism over 7 GPUs on one: no report, so no completion; the form is built all the same.
    const { context, page, problems } = await openPage(browser);
    await page.goto(`${url}?tp=7`);
    await page.waitForFunction(() => !document.getElementById("app").hasAttribute("aria-busy"), null, { timeout: 30_000 });
    await page.waitForFunction(() => document.getElementById("model")?.options.length > 20 &&
      document.getElementById("gpu")?.options.length > 5 && document.querySelector(".custom-model form") !== null, null, { timeout: 10_000 })
      .catch(() => {});
    const form = await page.evaluate(() => ({
      models: document.getElementById("model")?.options.length ?? 0,
      gpus: document.getElementById("gpu")?.options.length ?? 0,
      custom: document.querySelector(".custom-model form") !== null,
      report: document.getElementById("peak-allocated") !== null,
    }));
    await context.close();
    expect(problems.length === 0, problems.join("\n  "));
    expect(!form.report && form.models > 20 && form.gpus > 5 && form.custom, `the refused link's form: ${JSON.stringify(form)}`);
  }],

  ["bad parameters fall back to defaults and the page names each one and why", async ({ browser, url }) => {
    const { context, page, problems } = await openPage(browser);
    await page.goto(`${url}?b=abc&m=gpt-9&p=fp64&zz=1&b=2&s=256&ka=2&lang=xx`);
    await loaded(page);
    const items = await page.$$eval("#link-warnings li", (lis) => lis.map((li) => [li.dataset.key, li.textContent]));
    const keys = items.map(([k]) => k).join(",");
    expect(keys === "b,m,p,b,ka,lang", `warned keys: ${keys}`);
    const line = items[0][1];
    expect(line === "b=abc: expected a whole number from 1 to 16,777,216; using 8", `first warning: ${line}`);
    expect(items[3][1].includes("first value is used"), `repeated b: ${items[3][1]}`);
    expect((await page.inputValue("#batch")) === "8" && (await page.inputValue("#seq")) === "256", "the good parameters were not kept");
    // Settings without `v` are a version-1 link: its eager attention is written out.
    const address = await settledSearch(page, "?v=2&s=256&at=eager");
    expect(address === "?v=2&s=256&at=eager", `address: ${address}`);
    await page.click("#link-warnings button");
    await page.waitForSelector("#link-warnings", { state: "detached", timeout: 5_000 });
    // Truncated, unicode and huge links never stop the page.
    for (const q of ["?v=1&m=bert-lar", "?m=%E6%98%BE%E5%AD%98&b=%F0%9F%92%A5", `?b=${"9".repeat(12_000)}`, "?j=1AAAA%%%&&&==", "?%"]) {
      await page.goto(url + q);
      await loaded(page);
    }
    await context.close();
    expect(problems.length === 0, problems.join("\n  "));
  }],

  ["XSS probes in every URL key render as inert text or are rejected", async ({ browser, url }) => {
    const { context, page, problems, dialogs } = await openPage(browser);
    for (const probe of PROBES) {
      const query = KEYS.map((k) => `${k}=${encodeURIComponent(probe)}`).join("&");
      for (const target of [url, `${url}embed.html`]) {
        await page.goto(`${target}?${query}`);
        await loaded(page);
        const state = await page.evaluate(() => ({
          xss: window.__xss,
          images: document.querySelectorAll("img[src='x'], img[onerror]").length,
          // The page's own inline script (early.js) aside: an injected one would carry the probe.
          scripts: [...document.scripts].filter((s) => !s.src && s.textContent.includes("__xss")).length,
          warned: [...document.querySelectorAll("#link-warnings li")].map((li) => li.dataset.key),
          text: document.querySelector("#link-warnings")?.textContent ?? "",
        }));
        expect(state.xss === undefined && state.images === 0 && state.scripts === 0, `${probe} in ${target}: ${JSON.stringify(state)}`);
        const missing = KEYS.filter((k) => !state.warned.includes(k));
        expect(missing.length === 0, `${probe}: no warning for ${missing.join(", ")}`);
        expect(state.text.includes(`b=${probe.slice(0, 48)}`), `${probe} is not shown as text: ${state.text.slice(0, 200)}`);
      }
    }
    // A config.json whose name is markup: shown as the model's name, as text.
    const json = JSON.stringify({ model_type: "gpt2", n_embd: 64, n_layer: 2, n_head: 2, vocab_size: 1000, _name_or_path: PROBES[1] });
    await page.goto(`${url}?j=${encodeURIComponent(json)}`);
    await loaded(page);
    expect((await text(page, "#summary .model-name")) === PROBES[1], `model name: ${await text(page, "#summary .model-name")}`);
    expect((await page.evaluate(() => window.__xss)) === undefined && (await page.locator("img[src='x']").count()) === 0, "the name ran");
    expect(dialogs.length === 0, `dialogs: ${dialogs}`);
    await context.close();
    expect(problems.length === 0, problems.join("\n  "));
  }],

  ["a Hub model id fetches its config.json on request, under the enforced CSP; a gated model, a missing one and no network say why in both languages and keep the box", async ({ browser, url }) => {
    // A stand-in for huggingface.co: the CSP is enforced, so a request the
    // policy blocked would never reach this route.
    const { context, page, problems } = await openPage(browser);
    const QWEN = JSON.stringify({
      model_type: "qwen3", hidden_size: 4096, intermediate_size: 12288, num_attention_heads: 32, num_key_value_heads: 8,
      num_hidden_layers: 36, vocab_size: 151936, head_dim: 128, tie_word_embeddings: false, _name_or_path: "Qwen/Qwen3-8B",
    });
    const asked = [];
    await context.route("https://huggingface.co/**", (route) => {
      const u = route.request().url();
      asked.push(u);
      if (u.includes("/Qwen/Qwen3-8B/")) return route.fulfill({ status: 200, contentType: "application/json", body: QWEN, headers: { "access-control-allow-origin": "*" } });
      if (u.includes("/meta-llama/")) return route.fulfill({ status: 401, body: "Access restricted", headers: { "access-control-allow-origin": "*" } });
      if (u.includes("/nobody/")) return route.fulfill({ status: 404, body: "Entry not found", headers: { "access-control-allow-origin": "*" } });
      return route.abort("internetdisconnected");
    });
    await page.goto(url);
    await loaded(page);
    await page.click("details.import summary");
    await page.fill("#hf-config", "Qwen/Qwen3-8B");
    await page.waitForSelector("#hub-fetch", { timeout: 5_000 });
    const offer = await text(page, "#hf-config-status");
    expect(offer.includes("huggingface.co") && offer.includes("from your browser"), `the offer does not say what it fetches: ${offer}`);
    expect(asked.length === 0, `fetched before asked: ${asked}`);
    await page.click("#hub-fetch");
    await page.waitForFunction(() => document.querySelector("#model")?.value === "hf-import", null, { timeout: 10_000 });
    expect(asked[0] === "https://huggingface.co/Qwen/Qwen3-8B/resolve/main/config.json", `asked ${asked[0]}`);
    expect((await text(page, "#summary")).startsWith("Qwen/Qwen3-8B"), `summary: ${await text(page, "#summary")}`);
    const failures = [
      ["meta-llama/Llama-3.1-8B", "gated or private", "需要授权"],
      ["nobody/no-such-model", "HTTP 404", "HTTP 404"],
      ["offline/model", "Could not reach huggingface.co", "无法连接"],
    ];
    for (const [id, en, zh] of failures) {
      await page.fill("#hf-config", id);
      await page.click("#hub-fetch");
      await page.waitForFunction((m) => document.querySelector("#hf-config-status")?.textContent.includes(m), en, { timeout: 5_000 })
        .catch(() => {});
      const status = await text(page, "#hf-config-status");
      expect(status.includes(en) && status.includes(id), `${id}: ${status}`);
      expect((await page.inputValue("#hf-config")) === id, `${id}: the box lost its text`);
      expect((await page.inputValue("#model")) === "hf-import", `${id}: the Qwen import was dropped`);
      await page.selectOption("#lang", "zh-CN");
      await page.waitForFunction((m) => document.querySelector("#hf-config-status")?.textContent.includes(m), zh, { timeout: 5_000 })
        .catch(() => {});
      const zhStatus = await text(page, "#hf-config-status");
      expect(zhStatus.includes(zh), `${id} in Chinese: ${zhStatus}`);
      await page.selectOption("#lang", "en");
    }
    const violations = await page.evaluate(() => window.__violations);
    expect(violations.length === 0, `CSP violations: ${violations.join(", ")}`);
    await context.close();
    // The stand-in's 401 and 404 and the cut connection are the point of the check.
    const unexpected = problems.filter((p) => !p.includes("huggingface.co") && !p.includes("ERR_INTERNET_DISCONNECTED") && !p.includes("status of 401") && !p.includes("status of 404"));
    expect(unexpected.length === 0, unexpected.join("\n  "));
  }],

  ["the Content-Security-Policy is enforced on the page, the widget and the demo, and nothing violates it", async ({ browser, url }) => {
    const { context, page, problems } = await openPage(browser, { permissions: ["clipboard-read", "clipboard-write"] });
    const violations = async (p) => p.evaluate(() => window.__violations);
    await page.goto(url + LINKS[1]);
    await loaded(page);
    const meta = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', "content");
    // Scripts from this site, and one inline script named by its hash (early.js, inlined at build time).
    expect(/script-src 'self' 'sha256-[A-Za-z0-9+/]{43}=' 'wasm-unsafe-eval';/.test(meta) && !meta.includes("'unsafe-inline' ") &&
      !/script-src[^;]*unsafe-inline/.test(meta), `page CSP: ${meta}`);
    await page.fill("#batch", "7");
    await page.waitForFunction(() => location.search.includes("b=7"), null, { timeout: 5_000 });
    await page.click("details.import summary");
    await page.click("#copy-link");
    await page.waitForSelector("#results[data-complete='true']", { timeout: 10_000 });
    expect((await violations(page)).length === 0, `violations on the page: ${await violations(page)}`);
    // The policy is really in force: an inline script is refused.
    await page.evaluate(() => {
      const s = document.createElement("script");
      s.textContent = "window.__inline = 1";
      document.head.append(s);
    });
    await page.waitForFunction(() => window.__violations.length > 0, null, { timeout: 5_000 });
    expect((await page.evaluate(() => window.__inline)) === undefined, "an inline script ran despite the CSP");
    for (const target of ["embed.html?m=resnet50&curve=1", "demo.html"]) {
      await page.goto(url + target);
      await page.waitForLoadState("load");
      if (target.startsWith("demo")) {
        for (const el of await page.$$(".example")) await el.scrollIntoViewIfNeeded();
        await page.waitForFunction(() => document.querySelectorAll("iframe.vramfit-frame").length === 3, null, { timeout: 10_000 });
        for (const frame of page.frames().filter((f) => f !== page.mainFrame())) {
          await frame.waitForSelector("#summary", { timeout: 30_000 });
          expect((await violations(frame)).length === 0, `violations in ${frame.url()}: ${await violations(frame)}`);
        }
      } else {
        await loaded(page);
      }
      expect((await violations(page)).length === 0, `violations on ${target}: ${await violations(page)}`);
    }
    await context.close();
    // The refused inline script is reported as a console error; nothing else may be.
    const other = problems.filter((p) => !p.includes("Content Security Policy"));
    expect(other.length === 0, other.join("\n  "));
  }],

  ["a published build carries its base URL into links, embed code and preview tags", async ({ browser, repo, dist }) => {
    const site = path.join(outDir, "site");
    const base = "https://docs.example/vramfit/";
    execFileSync("bash", [path.join(repo, "scripts", "publish.sh"), "--no-build", "--base-url", base, "--out", site], {
      env: { ...process.env, DIST_DIR: dist },
      stdio: "pipe",
    });
    const { server, url } = await serve(site);
    try {
      const { context, page, problems } = await openPage(browser);
      await page.goto(`${url}?m=resnet50&b=16`);
      await loaded(page);
      const meta = (sel) => page.getAttribute(sel, "content");
      expect((await meta('meta[property="og:url"]')) === base, "og:url");
      expect((await meta('meta[property="og:image"]')) === `${base}og-image.png`, "og:image");
      expect((await meta('meta[name="description"]')).length > 80, "description");
      expect((await meta('meta[property="og:title"]')).startsWith("vramfit"), "og:title");
      expect((await page.title()).startsWith("vramfit — "), `title: ${await page.title()}`);
      const link = await page.inputValue("#share-link");
      expect(link === `${base}?v=2&m=resnet50&b=16&at=eager`, `link: ${link}`);
      const embed = await page.inputValue("#embed-code");
      expect(embed.includes(`<script src="${base}embed.js" async>`), `embed code: ${embed}`);
      await context.close();
      expect(problems.length === 0, problems.join("\n  "));
    } finally {
      server.close();
    }
  }],
];
