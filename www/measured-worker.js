// Reads a measurement file (a CUDA memory snapshot pickle or memory_stats()
// JSON) off the page's main thread: the page starts this module worker only
// when a file is chosen and posts it the File; the worker reads its bytes,
// runs vramfit's reader (dist/measured/, a wasm module of its own) and posts
// back its JSON: {"ok": measurement} or {"error": {code, numbers, text}}.
import init, { read_measurement } from "./measured/vramfit_measured_web.js";

const ready = init();

self.onmessage = async (event) => {
  try {
    await ready;
    const bytes = new Uint8Array(await event.data.arrayBuffer());
    self.postMessage(read_measurement(bytes));
  } catch (err) {
    self.postMessage(JSON.stringify({ error: { code: "worker", numbers: [], text: String(err) } }));
  }
};
