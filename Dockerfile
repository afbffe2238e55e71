# syntax=docker/dockerfile:1
# The stampede container image: one static (musl) binary on busybox. Busybox
# rather than distroless because the agents' pods need /bin/sh, sleep and
# tar: `stampede k8s` manifests run a short shell script around `stampede run`,
# and `kubectl cp` copies results out with tar.
#
#   docker build -t REGISTRY/stampede:0.1 .
#   docker run --rm REGISTRY/stampede:0.1 http://host:8080/ -c 100 -d 10s
#   stampede k8s http://svc:8080/ -c 16000 -d 5m --agents 8 --image REGISTRY/stampede:0.1
#
# For arm64 nodes: --build-arg TARGET=aarch64-unknown-linux-musl on an arm64 builder.

FROM rust:1-bookworm AS build
ARG TARGET=x86_64-unknown-linux-musl
# musl-gcc compiles the C parts of the TLS stack (ring) for the musl target.
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN rustup target add "$TARGET"
WORKDIR /src
# Only what the binary is built from (no target/, tests or benchmarks in the context).
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY crates ./crates
RUN cargo build --release --locked --target "$TARGET" --bin stampede \
 && cp "target/$TARGET/release/stampede" /stampede \
 && strip /stampede \
 && /stampede --version

FROM busybox:1.36
# rustls reads the system's CA bundle for https:// targets.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
COPY --from=build /stampede /usr/local/bin/stampede
RUN mkdir -p /results && chmod 1777 /results
# No root needed: stampede raises its open-file limit up to the hard limit,
# which the container runtime sets (commonly 1048576).
USER 65534:65534
WORKDIR /results
ENTRYPOINT ["/usr/local/bin/stampede"]
CMD ["--help"]
