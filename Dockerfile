# Multi-stage build: a static limitdb binary on a minimal base, run as a
# non-root user, listening on 6379 with the example limitdb.conf.
#
# Not open by default: the image listens on every interface with
# protected-mode on and no password, so clients from outside the container
# (which arrive from a bridge address, not 127.0.0.1) get
#   -DENIED Redis is running in protected mode because ...
# Set a password to serve them; arguments after the image name are read
# after the config file, so they win:
#   docker run -p 6379:6379 limitdb --requirepass "$LIMITDB_PASSWORD"
# or mount a config file of your own over /etc/limitdb/limitdb.conf
# (writable if you want CONFIG REWRITE to work):
#   docker run -p 6379:6379 -v $PWD/my.conf:/etc/limitdb/limitdb.conf limitdb
# The data is kept in the volume /data (docker run -v limitdb-data:/data …).
# Prometheus metrics are off unless asked for; inside a container they
# must bind beyond loopback to be scraped:
#   docker run -p 6379:6379 -p 9121:9121 limitdb --metrics-port 9121 --metrics-bind 0.0.0.0
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/limitdb ./cmd/limitdb \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/limitdb /usr/local/bin/limitdb
COPY limitdb.conf /etc/limitdb/limitdb.conf
# the data (the Raft log, snapshots, dump.rdb) lives in /data: mount a
# volume there to keep it across containers
COPY --from=build --chown=nonroot:nonroot /out/data /data
VOLUME /data
USER nonroot:nonroot
EXPOSE 6379
ENTRYPOINT ["/usr/local/bin/limitdb", "/etc/limitdb/limitdb.conf", "--dir", "/data"]
