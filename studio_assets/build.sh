#!/bin/sh
# Build the Studio's editor bundle (CodeMirror 6) and its licence file.
#
#   cd studio_assets && npm ci && sh build.sh
#
# Writes, under insika_knowledge/studio/static/:
#   editor.js              the minified bundle (an IIFE; no CDN, nothing fetched at run time)
#   editor.LICENSES.txt    the licence of every npm package inside the bundle
# Both are committed; node_modules/ is not. Re-run after changing editor.js or package.json.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../insika_knowledge/studio/static"
cd "$here"
npx --no-install esbuild editor.js \
  --bundle --minify --format=iife --target=es2020 --legal-comments=none \
  --metafile=meta.json --outfile="$out/editor.js"
node licenses.mjs meta.json "$out/editor.LICENSES.txt"
rm -f meta.json
ls -l "$out/editor.js" "$out/editor.LICENSES.txt"
