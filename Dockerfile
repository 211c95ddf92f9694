# agentline in a container: one static binary (the SQLite driver is pure Go,
# so CGO is off), running as a non-root user, with its SQLite file on the
# /data volume. See docs/deploy.md.
#
#   docker build --build-arg VERSION=$(git describe --always) -t agentline .
#   docker run -p 8080:8080 -v agentline-data:/data --stop-timeout 70 agentline

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/agentline ./cmd/agentline \
 && mkdir /out/data

# distroless/static: CA certificates and time zones, no shell, uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/agentline /usr/local/bin/agentline
# A named volume starts as a copy of this directory, owned by nonroot.
COPY --from=build --chown=65532:65532 /out/data /data
ENV AGENTLINE_ADDR=:8080 \
    AGENTLINE_DATABASE_URL=sqlite:/data/agentline.db
VOLUME /data
EXPOSE 8080
USER 65532:65532
# SIGTERM drains: /readyz turns 503, live calls finish (AGENTLINE_DRAIN_TIMEOUT).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/agentline"]
CMD ["serve"]
