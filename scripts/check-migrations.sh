#!/usr/bin/env bash
# Fails when server/db/schema and the committed migrations differ: drizzle-kit generates into a
# scratch copy of the migrations folder and must report that there is nothing to generate.
# (drizzle-kit exits 0 on some errors, so its words are checked, not only its exit code.)
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.migrations-check
rm -rf "$scratch"
trap 'rm -rf "$scratch"' EXIT
cp -r server/db/migrations "$scratch"
out=$(npx --no-install drizzle-kit generate --dialect postgresql --schema ./server/db/schema/index.ts --out "./$scratch" 2>&1) || true
if ! grep -q 'No schema changes' <<<"$out"; then
  echo "$out" >&2
  echo "schema and migrations differ (or drizzle-kit failed): run 'npm run db:generate' and commit server/db/migrations" >&2
  exit 1
fi
echo "migrations match the schema"
