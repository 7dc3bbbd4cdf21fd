# miniapiserver: a static binary on a distroless base, run as a non-root user.
# Build: docker build -t miniapiserver .   Run with etcd: deploy/docker-compose.yaml
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/miniapiserver ./cmd/miniapiserver \
    && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/miniapiserver /usr/local/bin/miniapiserver
# --data-dir (certificate, admin token, kubeconfig), writable by the user.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
EXPOSE 6443
ENTRYPOINT ["/usr/local/bin/miniapiserver"]
CMD ["--data-dir=/data", "--bind-address=0.0.0.0"]
