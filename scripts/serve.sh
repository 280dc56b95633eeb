#!/usr/bin/env bash
# Builds the web page (scripts/build-web.sh) and serves dist/ on
# http://127.0.0.1:${PORT:-8080}/ until interrupted.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/build-web.sh
PORT=${PORT:-8080}
DIST=${DIST_DIR:-dist}
printf '\nServing %s/ on http://127.0.0.1:%s/ (Ctrl-C to stop)\n' "$DIST" "$PORT"
# Explicit MIME types: browsers refuse to stream-compile wasm served as anything
# but application/wasm, and the system's mime.types may lack it.
exec python3 -c '
import functools, http.server, sys
class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        ".html": "text/html; charset=utf-8",
        ".js": "text/javascript; charset=utf-8",
        ".css": "text/css; charset=utf-8",
        ".svg": "image/svg+xml",
        ".png": "image/png",
        ".wasm": "application/wasm",
    }
port, root = int(sys.argv[1]), sys.argv[2]
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Handler, directory=root))
server.serve_forever()
' "$PORT" "$DIST"
