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

# fuzz targets: each runs briefly (the seed corpus and the crashers kept
# under <package>/testdata/fuzz/<Target>/ also run in the plain go test).
go test -run '^$' -fuzz '^FuzzCommandArgs$' -fuzztime 12s ./server
go test -run '^$' -fuzz '^FuzzConnection$' -fuzztime 8s ./server
go test -run '^$' -fuzz '^FuzzReader$' -fuzztime 8s ./resp
# luavm: Lua value conversion both ways, cjson/cmsgpack/struct decoders
for f in FuzzReplyToLua FuzzScriptResult FuzzCjsonDecode FuzzCmsgpackUnpack FuzzStructUnpack; do
  go test -run '^$' -fuzz "^${f}\$" -fuzztime 5s ./luavm
done
# acl: rule parsing (SETUSER round trip) and aclfile loading
for f in FuzzSetUser FuzzLoad; do
  go test -run '^$' -fuzz "^${f}\$" -fuzztime 4s ./acl
done
