#!/usr/bin/env bash
# Runs limitdb's whole test suite. The differential tests compare limitdb
# with a real redis-server, so it installs Debian's redis-server when it is
# missing (apt-get needs root, as on the project's machines and CI).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null 2>&1; then
  echo "redis-server not found: installing it with apt-get" >&2
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null
fi
redis-server --version

go vet ./...
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go test -count=1 -timeout 20m ./... "$@"

# fuzz targets: each runs for a few seconds; a crasher is written under the
# package's testdata/fuzz/<FuzzName>/ and replayed by every plain go test.
# luavm: Lua value conversion both ways, cjson/cmsgpack/struct decoders (~25 s)
for f in FuzzReplyToLua FuzzScriptResult FuzzCjsonDecode FuzzCmsgpackUnpack FuzzStructUnpack; do
  go test -run '^$' -fuzz "^${f}\$" -fuzztime 5s ./luavm
done
