# Multi-stage build: a static limitdb binary on a minimal base, run as a
# non-root user, listening on 6379.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/limitdb ./cmd/limitdb

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/limitdb /usr/local/bin/limitdb
USER nonroot:nonroot
EXPOSE 6379
ENTRYPOINT ["/usr/local/bin/limitdb", "--bind", "0.0.0.0", "--port", "6379", "--dir", "/tmp"]
