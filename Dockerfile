# syntax=docker/dockerfile:1
# Arbiter's image: a static binary on a distroless base, running as a non-root user.
# Build:  docker build -t arbiter .
# Run:    docker compose up (docker-compose.yml), or the Helm chart in deploy/helm/arbiter.

# The Go version of go.mod's "go" line.
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# Modules first, so that a change to the sources does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO_ENABLED=0: a static binary that needs no libc in the runtime image.
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags="-s -w" -o /out/arbiter ./cmd/arbiter

# distroless/static: CA certificates and /etc/passwd, no shell, no package manager; the
# :nonroot tag runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/arbiter /usr/local/bin/arbiter
USER 65532:65532
WORKDIR /home/nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/arbiter"]
# Listen on every interface of the container; the database and cluster come from the
# environment (ARBITER_DATABASE_URL, ARBITER_KUBECONFIG or the in-cluster ServiceAccount).
CMD ["serve", "--addr=0.0.0.0:8080"]
